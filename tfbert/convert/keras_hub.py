"""Load keras-hub backbone presets (BERT, ALBERT, RoBERTa, ELECTRA, XLM-R) into tfbert encoders.

A preset folder is what `backbone.save_to_preset(folder)` (and `tokenizer.save_to_preset(folder)`)
writes: `config.json` naming the backbone class and its arguments, `model.weights.h5`, and, with
a tokenizer, `tokenizer.json` and `assets/tokenizer/` (WordPiece `vocabulary.txt`, SentencePiece
`vocabulary.spm`, or byte-level BPE `vocabulary.json` + `merges.txt`). keras-hub itself loads the
backbone (`keras_hub.models.Backbone.from_preset`); the family whose `keras_hub` format
(`tfbert.architectures`) names the backbone class reads its arguments and maps its variables
by path.

Example:
    >>> from tfbert.convert.keras_hub import load_keras_hub, read_preset, preset_tokenizer
    >>> encoder = load_keras_hub("bert_tiny_en_uncased/")   # keras-hub preset folders: not in the test assets  # doctest: +SKIP
    >>> preset = read_preset("albert_base_en_uncased/")  # doctest: +SKIP
    >>> tokenizer = preset_tokenizer(preset)        # SentencePieceTokenizer, or None  # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from tfbert import architectures
from tfbert.architectures import ArchitectureSpec
from tfbert.artifacts.layout import KERAS_HUB_CONFIG_FILE as CONFIG_FILE
from tfbert.artifacts.layout import KERAS_HUB_TOKENIZER_FILE as TOKENIZER_CONFIG_FILE
from tfbert.artifacts.layout import TOKENIZER_FOLDER
from tfbert.config import EncoderConfig, ModelConfig
from tfbert.convert import weights
from tfbert.models.encoder import Encoder

FORMAT = "keras_hub"
WEIGHTS_FILE = "model.weights.h5"
TOKENIZER_ASSETS = Path("assets") / TOKENIZER_FOLDER
# keras-hub's vocabulary files for each tokenizer kind (`ArchitectureSpec.tokenizer`).
VOCABULARY_FILES = {"wordpiece": ("vocabulary.txt",), "sentencepiece": ("vocabulary.spm",),
                    "byte_bpe": ("vocabulary.json", "merges.txt")}


def _read_json(path: Path) -> Mapping[str, Any]:
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist: a keras-hub preset folder (save_to_preset) has "
                                f"{CONFIG_FILE} and {WEIGHTS_FILE}")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ValueError(f"{path} is not valid JSON: {error}") from None
    if not isinstance(data, Mapping) or not isinstance(data.get("config"), Mapping):
        raise ValueError(f"{path} is not a keras-hub config: expected a JSON object with class_name and config")
    return data


def family_of(backbone_class: str) -> ArchitectureSpec:
    """The registered family whose `keras_hub` format is `backbone_class`; `ValueError` naming those supported."""
    supported = {architectures.get(name).formats[FORMAT].backbone_class: name for name in architectures.names()
                 if FORMAT in architectures.get(name).formats}
    if backbone_class not in supported:
        raise ValueError(f"keras-hub backbone {backbone_class!r} is not supported; supported: {', '.join(supported)}")
    return architectures.get(supported[backbone_class])


@dataclasses.dataclass
class KerasHubPreset:
    """A preset folder read so far (see `read_preset`): its family, config and backbone class.

    Attributes:
        folder: the preset folder.
        spec: the family of its backbone.
        config: the tfbert config of the backbone.
        backbone_class: `config.json`'s `class_name` (`BertBackbone`).
    """

    folder: Path
    spec: ArchitectureSpec
    config: ModelConfig
    backbone_class: str

    def variables(self) -> dict[str, np.ndarray]:
        """The backbone's variables by path (`transformer_layer_0/self_attention_layer/query/kernel`), float32."""
        try:
            import keras_hub
        except ImportError:
            raise ImportError("reading keras-hub presets needs keras-hub: pip install keras-hub") from None
        if not (self.folder / WEIGHTS_FILE).is_file():
            raise FileNotFoundError(f"{self.folder / WEIGHTS_FILE} does not exist: the preset's weights")
        try:
            backbone = keras_hub.models.Backbone.from_preset(str(self.folder))
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise ValueError(f"keras-hub cannot load the preset {self.folder}: {error}") from None
        return {variable.path: np.asarray(variable.numpy(), dtype=np.float32) for variable in backbone.weights}

    def build_encoder(self, dtype: str | None = None) -> Encoder:
        """The `Encoder` with the backbone's weights; its outputs equal the backbone's (sequence and pooled)."""
        variables = self.variables()
        encoder = Encoder(self.config.encoder, dtype=dtype, name="encoder", architecture=self.config.architecture)
        assignments = self.spec.format(FORMAT).encoder_weights(encoder, "")
        used = weights.copy_weights(assignments, variables, f"keras-hub preset {self.folder}",
                                    str(self.folder / CONFIG_FILE))
        unused = sorted(set(variables) - used)
        if unused:
            raise ValueError(f"keras-hub preset {self.folder}: {len(unused)} variable(s) have no place in a tfbert "
                             f"{self.spec.name} encoder: {', '.join(unused[:10])}")
        return encoder


def read_preset(folder: str | Path) -> KerasHubPreset:
    """Reads `config.json` of a preset folder and finds the family; no model is loaded yet."""
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no such folder (expected a keras-hub preset folder)")
    path = folder / CONFIG_FILE
    data = _read_json(path)
    backbone_class = str(data.get("class_name"))
    spec = family_of(backbone_class)
    try:
        encoder = EncoderConfig(**spec.format(FORMAT).read_config(data["config"]))
        config = ModelConfig(architecture=spec.name, encoder=encoder,
                             description=f"converted from the keras-hub {backbone_class} preset {folder}")
    except KeyError as error:
        raise ValueError(f"{path}: {backbone_class} argument {error} is missing") from None
    except (TypeError, ValueError) as error:
        raise ValueError(f"{path}: {error}") from None
    return KerasHubPreset(folder, spec, config, backbone_class)


def preset_tokenizer(preset: KerasHubPreset):
    """The tfbert tokenizer of the preset's tokenizer assets, or None when it has none or the ids would differ.

    WordPiece keeps keras-hub's `lowercase`; SentencePiece (ALBERT) and byte-level BPE (RoBERTa)
    tokenize as keras-hub's do. XLM-R's keras-hub tokenizer shifts the SentencePiece ids
    (fairseq's layout), which tfbert's SentencePiece tokenizer does not: None.
    """
    # Deferred (start-up): `tfbert.text` imports TensorFlow; reading a preset's config and weights needs only Keras
    from tfbert.text import BytePairTokenizer, SentencePieceTokenizer, WordPieceTokenizer

    files = [preset.folder / TOKENIZER_ASSETS / name for name in VOCABULARY_FILES[preset.spec.tokenizer]]
    if not preset.spec.format(FORMAT).tokenizer_ids_match or not all(path.is_file() for path in files):
        return None
    settings = _read_json(preset.folder / TOKENIZER_CONFIG_FILE)["config"] \
        if (preset.folder / TOKENIZER_CONFIG_FILE).is_file() else {}
    builders = {
        "wordpiece": lambda: WordPieceTokenizer(files[0], lowercase=bool(settings.get("lowercase", False))),
        "sentencepiece": lambda: SentencePieceTokenizer(files[0]),
        "byte_bpe": lambda: BytePairTokenizer(files[0], files[1]),
    }
    return builders[preset.spec.tokenizer]()


def load_keras_hub(folder: str | Path, dtype: str | None = None) -> Encoder:
    """Builds a tfbert `Encoder` from a keras-hub backbone preset folder, with its weights.

    Example:
        >>> encoder = load_keras_hub("roberta_base_en/")   # a keras-hub preset folder (not in the test assets)  # doctest: +SKIP
        >>> encoder.config.position_offset  # doctest: +SKIP
        2
    """
    return read_preset(folder).build_encoder(dtype=dtype)
