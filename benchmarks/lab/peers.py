"""Which peer libraries are installed: each table runs the contenders whose libraries import, and notes the rest.

Example:
    >>> PEERS["keras-hub"]
    'keras_hub'
    >>> installed("sentencepiece")  # a dependency of tfbert itself
    True
"""

from __future__ import annotations

import importlib
from typing import Iterable

# A peer's name as a table shows it -> the module it imports.
PEERS = {
    "keras-hub": "keras_hub",
    "transformers": "transformers",
    "torch": "torch",
    "tokenizers": "tokenizers",
    "sentencepiece": "sentencepiece",
    "tiktoken": "tiktoken",
    "jax": "jax",
}


def installed(peer: str) -> bool:
    """Whether `peer`'s module imports (a broken install counts as absent)."""
    try:
        importlib.import_module(PEERS[peer])
    except ImportError:
        return False
    return True


def missing(peers: Iterable[str]) -> list[str]:
    """The peers of `peers` that are not installed, in order."""
    return [peer for peer in peers if not installed(peer)]


def version(peer: str) -> str | None:
    """The installed version of `peer`, or None where it is not installed."""
    if not installed(peer):
        return None
    return getattr(importlib.import_module(PEERS[peer]), "__version__", "unknown")


def skipped_note(peer: str) -> str:
    """The line a table carries for a contender it left out."""
    return f"skipped: {peer} not installed"
