"""Fine-tuning a task model on a pretrained encoder: features, evaluators and the `finetune` driver.

| module | what it owns |
|---|---|
| `finetune` | `finetune(model, ...)`: `model.fit` with the task's evaluator each epoch, the best epoch kept |
| `features`, `question_answering`, `tagging`, `tokenization` | texts, SQuAD windows and tagged words as NumPy features (the model's `SegmentPacker`) |
| `evaluation` | one evaluator per task, the metrics `finetune` keeps the best epoch by |
| `embeddings`, `distillation` | sentence-embedding training (pair losses) and multilingual distillation |
| `pretrained`, `model_dir`, `label_checks` | the encoder and tokenizer read from any source; the model dir's `task.json` and manifest; class labels checked before training |

The example readers are in `tfbert.data`, the task models in `tfbert.models.tasks` and the text
embedders in `tfbert.inference`; `tfbert.tasks` re-exports the public names of all four.

Example:
    >>> from tfbert.finetuning.finetune import finetune
    >>> finetune.__name__
    'finetune'
"""
