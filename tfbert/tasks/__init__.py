"""Fine-tuning tasks: task models, features, loaders, evaluation and the `finetune` driver."""
