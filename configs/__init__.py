"""Model configurations shipped with tfbert (YAML files; see `tfbert.config.load_config`)."""
