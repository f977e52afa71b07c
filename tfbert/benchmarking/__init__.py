"""The measuring cores behind `tfbert benchmark` and the scripts in `benchmarks/`.

Each table is a module with `measure(...) -> Table` (`tokenization`, `pipeline`); the shared
pieces are `timing` (alternating runs), `peers` (which peer libraries are installed),
`machine` (the label a recorded run carries) and `report` (tables and the RESULTS.md section).
Text comes from the real test assets (`assets`), which `python tests/assets.py` unpacks.

Example:
    >>> from tfbert.benchmarking.report import Table
    >>> print(Table("Demo", ["name", "x"], [["a", "1"]]).markdown())
    | name | x |
    |---|---:|
    | a | 1 |
"""
