"""The `tfbert` program's garbage-collector settings, once TensorFlow is imported.

Importing TensorFlow leaves about 380,000 objects that the collector tracks and that live as long
as the process; each full collection walks all of them again, and a command's graph building and
tracing set collections off often. The program moves what exists after the import out of the
collector's sight (`gc.freeze`) and collects the young generation every 50,000 allocations
instead of every 700: a `tfbert pretrain` of `bert_tiny` for two steps took 17.5 CPU-s before,
15.9 after. Reference counting still frees every object at once; only reference cycles wait
longer to be freed.

Only the first call in a process does this: a frozen object that later becomes part of a garbage
cycle is never collected, so nothing made after the import (a model, a dataset) is frozen.

    >>> set_aside_imported_objects()
"""

from __future__ import annotations

import gc

YOUNG_GENERATION_ALLOCATIONS = 50_000

_done = False


def set_aside_imported_objects() -> None:
    """Collects, freezes the objects that survive and makes young-generation collections rarer (first call only)."""
    global _done
    if _done:
        return
    _done = True
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_GENERATION_ALLOCATIONS, 20, 20)
