"""BERT: `spec` (its `ArchitectureSpec`), `formats` (its checkpoint formats);
it pretrains with the generic `tfbert.models.pretraining.PretrainingModel`."""
