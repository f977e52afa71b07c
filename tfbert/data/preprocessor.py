"""One `Preprocessor` per model: tokenizer + packer + sequence length + packing style (+ masker).

Fine-tuning features (`tfbert.tasks.encode_texts`), pretraining pipelines (`tfbert.training.pretraining_inputs`)
and exported SavedModels all turn text into encoder inputs through it, so training and serving
cannot disagree: RoBERTa-style families pack pairs `<s> a </s></s> b </s>` with type ids 0, BERT-style
ones `[CLS] a [SEP] b [SEP]` with type ids 0 then 1, and pairs longer than the sequence are trimmed
longest-first as Hugging Face does (`tfbert.data.packing`).

A preprocessor is saved beside its model as `preprocessor.json` (sequence length, packing style,
architecture, masking settings) plus the `tokenizer/` folder; `Preprocessor.load` reads both back.
`tfbert pretrain` writes one into its run folder, `tfbert finetune` into its model folder and
`tfbert export` into the SavedModel's `assets.extra/`.

Example:
    >>> from tfbert.text import WordPieceTokenizer
    >>> preprocessor = Preprocessor.for_architecture("roberta", WordPieceTokenizer("vocab.txt"), sequence_length=16)
    >>> preprocessor.pack(tf.constant(["a question?"]), tf.constant(["an answer."]))["segment_ids"]
    <tf.Tensor: shape=(1, 16), dtype=int32, numpy=array([[0, 0, ..., 0]], dtype=int32)>
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import tensorflow as tf

from tfbert import architectures
from tfbert.artifacts.files import read_preprocessor_settings
from tfbert.artifacts.layout import PREPROCESSOR_FILE, TOKENIZER_FOLDER
from tfbert.data.masking import MaskedLMMasker
from tfbert.data.packing import PackingStyle, SegmentPacker, packing_style_of
from tfbert.text import load_tokenizer
from tfbert.text.base import Tokenizer, as_utf8

DEFAULT_SEQUENCE_LENGTH = 128
# Text is cut to this many characters per sequence position before tokenizing, so a 4 MB string
# costs what a short one does. A token past the cut needs tokens averaging over 256 characters
# (whitespace runs, runs of unknown characters), which real text does not have.
CHARACTERS_PER_POSITION = 256


@dataclasses.dataclass(frozen=True)
class MaskingSettings:
    """How a preprocessor masks for masked-LM pretraining (`MaskedLMMasker.for_tokenizer`'s arguments).

    Example:
        >>> MaskingSettings(max_predictions=20, unit="ngram", word_scheme="sentencepiece").selection_rate
        0.15
    """

    max_predictions: int = 20
    unit: str = "token"
    word_scheme: str | None = None
    selection_rate: float = 0.15
    mask_token_rate: float = 0.8
    random_token_rate: float = 0.1


class Preprocessor(tf.Module):
    """Strings `[batch]` (or pairs) to int32 encoder inputs `[batch, sequence_length]`, in the graph.

    Args:
        tokenizer: a `tfbert.text` tokenizer with cls, sep and pad tokens.
        sequence_length: the fixed length inputs are packed, truncated and padded to.
        packing_style: `bert` or `roberta` (see `tfbert.data.packing`); by default the
            `architecture`'s (its spec's), else the tokenizer's (`packing_style_of`: `[CLS]` or `<s>`).
        masking: `MaskingSettings` to mask for masked-LM pretraining (`mask`); None for none.
        architecture: the family the preprocessor belongs to, recorded when saved.

    Text longer than `sequence_length` is truncated (one text at its end, pairs longest-first);
    invalid UTF-8 is replaced by U+FFFD. Only the first `CHARACTERS_PER_POSITION * sequence_length`
    characters of a text are tokenized (`clean`): the rest cannot reach the model.

    Example:
        >>> from tfbert.text import WordPieceTokenizer
        >>> preprocessor = Preprocessor(WordPieceTokenizer("vocab.txt"), sequence_length=16)
        >>> preprocessor.pack(tf.constant(["hello world"]))["token_ids"].numpy()[0, :4]
        array([ 101, 7592, 2088,  102], dtype=int32)
    """

    def __init__(self, tokenizer: Tokenizer, sequence_length: int = DEFAULT_SEQUENCE_LENGTH, *,
                 packing_style: PackingStyle | None = None, masking: MaskingSettings | None = None,
                 architecture: str | None = None):
        super().__init__(name="preprocessor")
        missing = [role for role in ("cls", "sep", "pad") if getattr(tokenizer, f"{role}_id") is None]
        if missing:
            raise ValueError(f"the tokenizer has no {', '.join(missing)} token, which packing needs")
        self.tokenizer = tokenizer
        self.sequence_length = sequence_length
        self.architecture = architecture
        if packing_style is None:
            packing_style = (architectures.get(architecture).packing_style if architecture
                             else packing_style_of(tokenizer))
        self.packer = SegmentPacker(sequence_length, tokenizer.cls_id, tokenizer.sep_id, tokenizer.pad_id,
                                    style=packing_style)
        self.masking = masking
        self.masker = MaskedLMMasker.for_tokenizer(tokenizer, **dataclasses.asdict(masking)) if masking else None

    @classmethod
    def for_architecture(cls, architecture: str, tokenizer: Tokenizer,
                         sequence_length: int = DEFAULT_SEQUENCE_LENGTH,
                         masking: MaskingSettings | None = None) -> "Preprocessor":
        """The preprocessor of `architecture` (its spec's packing style) with `tokenizer`.

        Example:
            >>> from tfbert.text import WordPieceTokenizer
            >>> Preprocessor.for_architecture("xlmr", WordPieceTokenizer("vocab.txt"), 128).packing_style
            'roberta'
        """
        return cls(tokenizer, sequence_length, masking=masking, architecture=architecture)

    @property
    def packing_style(self) -> PackingStyle:
        return self.packer.style

    def tokenize(self, text: tf.Tensor) -> dict[str, tf.Tensor]:
        """`token_ids` `[batch, longest]` padded with the pad id, and `lengths` `[batch]`, both int32."""
        ids = self.tokenizer.tokenize(text)
        return {
            "token_ids": ids.to_tensor(default_value=self.tokenizer.pad_id),
            "lengths": tf.cast(ids.row_lengths(), tf.int32),
        }

    def pack_ids(self, *segments: tf.RaggedTensor) -> dict[str, tf.Tensor]:
        """Encoder inputs (`token_ids`, `segment_ids`, `padding_mask`) from tokenized segments `[batch, None]`."""
        return self.packer(list(segments))

    def pack(self, text: tf.Tensor, text_pair: tf.Tensor | None = None) -> dict[str, tf.Tensor]:
        """Encoder inputs for one text or a pair per row."""
        segments = [self.tokenizer.tokenize(self.clean(text))]
        if text_pair is not None:
            segments.append(self.tokenizer.tokenize(self.clean(text_pair)))
        return self.pack_ids(*segments)

    __call__ = pack

    def mask(self, inputs: Mapping[str, tf.Tensor], seed: tf.Tensor | Sequence[int] | None = None
             ) -> dict[str, tf.Tensor]:
        """Packed inputs with masked-LM masking applied (`MaskedLMMasker`); needs `masking` settings."""
        if self.masker is None:
            raise ValueError("this preprocessor has no masking settings; build it with masking=MaskingSettings(...)")
        return self.masker(inputs, seed=seed)

    def encode(self, texts: Sequence[str], pair_texts: Sequence[str] | None = None) -> dict[str, np.ndarray]:
        """`pack` on Python strings, as NumPy arrays (what `tfbert.tasks.encode_texts` returns)."""
        pair = None if pair_texts is None else tf.constant(list(pair_texts), tf.string)
        return {name: value.numpy() for name, value in self.pack(tf.constant(list(texts), tf.string), pair).items()}

    def trim_padding(self, inputs: Mapping[str, tf.Tensor]) -> dict[str, tf.Tensor]:
        """`inputs` cut to the batch's longest real row, so serving work follows the text, not `sequence_length`.

        Attention masks padding out, so per-text outputs are the same; a batch of short
        texts then costs a fraction of a full-length one.
        """
        longest = tf.maximum(tf.reduce_max(tf.reduce_sum(inputs["padding_mask"], axis=1)), 1)
        return {name: value[:, :longest] for name, value in inputs.items()}

    def clean(self, text: tf.Tensor) -> tf.Tensor:
        """The strings the tokenizer's offsets point into: the input with invalid UTF-8 replaced, cut to
        `CHARACTERS_PER_POSITION * sequence_length` characters (the most that can reach the model, so
        serving time and memory do not grow with megabyte inputs)."""
        limit = CHARACTERS_PER_POSITION * self.sequence_length
        # A character is at most 4 bytes, so the byte cut keeps the first `limit` characters whole and
        # the UTF-8 check and repair never scan the rest of a megabyte input.
        head = tf.strings.substr(text, 0, 4 * limit)
        return tf.strings.substr(as_utf8(head), 0, limit, unit="UTF8_CHAR")

    def get_config(self) -> dict[str, Any]:
        """What `preprocessor.json` holds (the tokenizer is saved beside it)."""
        return {"architecture": self.architecture, "sequence_length": self.sequence_length,
                "packing_style": self.packing_style, "truncation": self.packer.truncation,
                "masking": dataclasses.asdict(self.masking) if self.masking else None}

    def save(self, directory: str | Path) -> Path:
        """Writes `directory/preprocessor.json` and `directory/tokenizer/`; returns the JSON file's path."""
        directory = Path(directory)
        self.tokenizer.save_assets(directory / TOKENIZER_FOLDER)
        path = directory / PREPROCESSOR_FILE
        path.write_text(json.dumps(self.get_config(), indent=2) + "\n", encoding="utf-8")
        return path

    @classmethod
    def load(cls, directory: str | Path, tokenizer: Tokenizer | None = None,
             sequence_length: int | None = None) -> "Preprocessor":
        """The preprocessor `save` wrote into `directory`; `tokenizer` and `sequence_length` replace the saved ones."""
        config = read_preprocessor_settings(Path(directory))   # every field checked (`FileContentError`)
        masking = MaskingSettings(**config["masking"]) if config.get("masking") else None
        return cls(tokenizer or load_tokenizer(Path(directory) / TOKENIZER_FOLDER),
                   sequence_length or config["sequence_length"], packing_style=config["packing_style"],
                   masking=masking, architecture=config.get("architecture"))
