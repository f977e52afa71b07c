"""One writer per output: a lock file beside the output, held with `flock` and naming the holder's pid.

Every tfbert writer (vocab, pretrain, finetune, distill, augment, export, convert, quickstart) takes
this lock on what it writes, so two commands writing one folder or file never run at once; the
second is refused naming the first's pid. The lock is `PARENT/.tfbert-lock-NAME`, beside the output
rather than in it, because one-go outputs are built elsewhere and renamed into place.

Written by hand (a few lines) because `filelock` and `fcntl` alone say nothing about *who* holds a
lock. The kernel drops a `flock` when its process dies, so a killed writer leaves no stale lock to
take over: the file it leaves is reused.

    >>> import os
    >>> with OutputLock("runs/a", flag="--model-dir"):
    ...     os.mkdir("runs/a")   # a second `tfbert finetune --model-dir runs/a` is refused meanwhile
"""

from __future__ import annotations

import contextlib
import fcntl
import os

LOCK_MARK = ".tfbert-lock-"

# Paths this process holds, with how many times: a writer that calls another (quickstart calling
# export) takes the lock of a path it already holds without refusing itself.
_held: dict[str, list] = {}


class OutputBusy(ValueError):
    """Another live process holds the output's lock."""


def lock_path(path: str) -> str:
    """`PARENT/.tfbert-lock-NAME` for the output `path` (a folder or a file)."""
    folder, name = os.path.split(os.path.abspath(path))
    return os.path.join(folder, f"{LOCK_MARK}{name}")


def _holder(descriptor: int) -> str:
    os.lseek(descriptor, 0, os.SEEK_SET)
    return os.read(descriptor, 32).decode("ascii", "replace").strip() or "unknown"


class OutputLock:
    """Context manager: holds the lock of `path` (whose folder must exist), or raises OutputBusy naming the holder.

    Example:
        >>> with OutputLock("wordpiece/", flag="--output"):
        ...     pass
    """

    def __init__(self, path: str, flag: str = "--output"):
        self.path, self.flag = str(path), flag
        self.lock = lock_path(self.path)

    def __enter__(self) -> "OutputLock":
        if self.lock in _held:
            _held[self.lock][1] += 1
            return self
        while True:
            descriptor = os.open(self.lock, os.O_CREAT | os.O_RDWR, 0o644)
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _holder(descriptor)
                os.close(descriptor)
                raise OutputBusy(f"another tfbert process (pid {holder}) is writing to {self.path}; wait for it to "
                                 f"finish or give another {self.flag}") from None
            try:
                same_file = os.stat(self.lock).st_ino == os.fstat(descriptor).st_ino
            except FileNotFoundError:
                same_file = False
            if same_file:   # else the holder removed it as we opened it: lock the new one
                break
            os.close(descriptor)
        try:
            os.ftruncate(descriptor, 0)
            os.write(descriptor, str(os.getpid()).encode("ascii"))
        except OSError as error:   # a full disk: no lock file is left behind, and the output is named
            os.close(descriptor)
            with contextlib.suppress(FileNotFoundError):
                os.remove(self.lock)
            raise OSError(error.errno, error.strerror, self.path) from None
        _held[self.lock] = [descriptor, 1]
        return self

    def __exit__(self, *exc_info) -> None:
        entry = _held[self.lock]
        entry[1] -= 1
        if entry[1]:
            return
        del _held[self.lock]
        try:
            os.remove(self.lock)
        except FileNotFoundError:
            pass
        os.close(entry[0])
