"""XLM: `spec` (its `ArchitectureSpec`), `formats` (its checkpoint formats),
`models` (its Keras pretraining models), `data` (its `tlm:`/`mlm:`/`clm:` pretraining data)."""
