"""Pretraining input pipelines: packing, masking, readers and example builders."""

from tfbert.data.packing import SegmentPacker, num_special_tokens

__all__ = ["SegmentPacker", "num_special_tokens"]
