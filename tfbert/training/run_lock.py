"""One writer per run directory: a lock file holding the writer's pid, for the life of the process.

Written by hand (a few lines) because `fcntl` locks do not survive on network file systems and say
nothing about *who* holds them; a pid file does, and a pid that is no longer running marks a stale
lock left by a killed process, which is taken over.

    >>> with RunLock("runs/a"):  # doctest: +SKIP
    ...     train()          # a second `tfbert pretrain --model-dir runs/a` is refused meanwhile
"""

from __future__ import annotations

import os

LOCK_NAME = ".tfbert.lock"


class RunDirectoryBusy(ValueError):
    """Another live process holds the run directory's lock."""


def _pid_is_running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _holder(path: str) -> int | None:
    try:
        with open(path, encoding="utf-8") as lock:
            return int(lock.read().strip() or 0) or None
    except (OSError, ValueError):
        return None


class RunLock:
    """Context manager: holds `MODEL_DIR/.tfbert.lock` (this pid) or raises RunDirectoryBusy naming the holder.

    Example:
        >>> with RunLock("runs/a"):
        ...     pass
    """

    def __init__(self, model_dir: str):
        self.model_dir = model_dir
        self.path = os.path.join(model_dir, LOCK_NAME)

    def __enter__(self) -> "RunLock":
        self.created_folder = not os.path.exists(self.model_dir)
        os.makedirs(self.model_dir, exist_ok=True)
        while True:
            try:
                descriptor = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                holder = _holder(self.path)
                if holder is not None and holder != os.getpid() and _pid_is_running(holder):
                    raise RunDirectoryBusy(
                        f"another process (pid {holder}) is writing to {self.model_dir}; wait for it to finish "
                        f"or use another --model-dir (if pid {holder} is not tfbert, delete {self.path})") from None
                os.remove(self.path)   # stale: its writer is gone
                continue
            with os.fdopen(descriptor, "w", encoding="utf-8") as lock:
                lock.write(str(os.getpid()))
            return self

    def __exit__(self, *exc_info) -> None:
        if _holder(self.path) == os.getpid():
            os.remove(self.path)
        if self.created_folder and not os.listdir(self.model_dir):
            os.rmdir(self.model_dir)   # a run refused before writing anything leaves no folder behind
