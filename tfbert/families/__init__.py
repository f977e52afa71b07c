"""The architecture families, one package each: `tfbert/families/<name>/`.

A family's package holds

- `spec.py`: its `ArchitectureSpec` (`SPEC`), plain data and a leaf of the import graph: it imports
  `tfbert.architectures.spec` and its own `formats`, never a model, Keras or TensorFlow, so
  `tfbert.config` reads it without building anything;
- `formats.py`: its checkpoint formats (Hugging Face, Google's TF1, keras-hub): config files and
  weight-name maps, NumPy only;
- `models.py` (where the family has its own): its Keras pretraining model classes (the spec's
  `keras_classes`) and the factory its spec names as `"tfbert.families.<name>.models:function"`,
  imported when a model is built;
- `configs/*.yaml`: its shipped configs (`tfbert configs`, `load_config("<name>_base")`), package data;
- other modules with code only the family needs (ELECTRA's two-checkpoint loader, DeBERTa's tokenizer folder).

The registry (`tfbert.architectures`) imports the built-in specs on first use; the packages import
nothing when imported themselves, so `tfbert.families.electra.spec` loads without Keras.

Example:
    >>> from tfbert.families.albert.spec import SPEC
    >>> from tfbert import architectures
    >>> architectures.get("albert") is SPEC
    True
"""
