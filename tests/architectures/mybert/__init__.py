"""A throwaway architecture family, laid out as a contributor would write `tfbert/families/mybert/`:
`spec.py` (the spec, plain data) and `formats.py` (its checkpoint formats); it pretrains with the
generic `PretrainingModel`, so it has no `models.py` (docs/adding-an-architecture.md, "A family inside tfbert")."""
