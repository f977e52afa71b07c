"""`tfbert` subcommands that need more than a few lines; each imports TensorFlow only when it runs."""
