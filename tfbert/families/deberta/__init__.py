"""DeBERTa-v3: `spec` (its `ArchitectureSpec`), `formats` (its checkpoint formats),
`models` (its Keras pretraining models)."""
