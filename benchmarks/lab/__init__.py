"""The measuring cores behind `python -m benchmarks` and the scripts in `benchmarks/`, kept in the checkout.

The lab imports torch, keras-hub and transformers (the `bench` extra), which tfbert's users do not
need, so it is not part of the installed package: `python -m benchmarks` runs it from a clone (the
scripts put `CHECKOUT` on `sys.path` and import it as `benchmarks.lab`).

Each table is a module with `measure(...) -> Table` (`tokenization`, `pipeline`); the shared
pieces are `timing` (alternating runs), `peers` (which peer libraries are installed),
`machine` (the label a recorded run carries) and `report` (tables and the RESULTS.md section).
Text comes from the real test assets (`assets`), which `python tests/assets.py` unpacks.

Example:
    >>> from benchmarks.lab.report import Table
    >>> print(Table("Demo", ["name", "x"], [["a", "1"]]).markdown())
    | name | x |
    |---|---:|
    | a | 1 |
"""

from pathlib import Path

# The checkout holding benchmarks/lab: on `sys.path` for `benchmarks.lab`, and the measuring subprocesses' folder.
CHECKOUT = Path(__file__).resolve().parents[2]
