"""What a tfbert command may write, and how: never over something else, never half, one writer at a time.

Every writer claims its output before writing anything:

- `new_output(path)` for outputs made in one go (a vocabulary, a finetune or distill model dir, a
  silver file, a converted model, an export's version folder): it refuses an existing `path`
  unless `overwrite`, takes the output's lock (`tfbert.output_lock`), and yields a temporary name
  beside `path` to write to. Only when the block ends without error is that renamed to `path`
  (an old one moved aside first and deleted after), so a failure, Ctrl-C or `kill` leaves
  nothing, and `--overwrite` never leaves a mix of old and new files.
- `run_folder(path, kind)` for resumable runs written in place (`tfbert pretrain`'s model dir, the
  quickstart's work folder): a folder holding its own kind of run (`run_kind`) is taken as it is,
  anything else is refused; with `overwrite` a new run starts, and what the folder held is moved
  aside and deleted once the new run has a checkpoint. A run that fails before its first
  checkpoint leaves the disk as it was, and so does one killed then (`kill -9`): the next command
  puts the folder set aside back.

Remote paths (`gs://...`) are written directly: buckets have no rename and no lock.

    >>> from tfbert.text.vocab_training import train_sentencepiece
    >>> with new_output("sentencepiece/", flag="--output", overwrite=False) as staging:
    ...     tokenizer = train_sentencepiece("corpus.txt", 500, staging)   # appears complete, or not at all
    >>> with run_folder("runs/bert", "pretrain", flag="--model-dir") as model_dir:   # a pretraining run resumes
    ...     model_dir
    'runs/bert'
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import sys
from pathlib import Path
from typing import Callable, Iterator

from tfbert import interrupts
from tfbert.artifacts import folder_kind
from tfbert.artifacts.layout import CHECKPOINT_INDEX
from tfbert.output_lock import OutputBusy, OutputLock  # noqa: F401  (OutputBusy: importable from here)

TEMPORARY_MARK = ".tfbert-tmp-"
# Markers of the resumable runs, until each writes the tfbert.json manifest that names its kind.
QUICKSTART_MARKER = "tfbert_quickstart.json"


class OutputRefused(ValueError):
    """The output may not be written: it exists, or it could not be written whole."""


class OutputExists(OutputRefused):
    """The output exists and is not a run this command resumes; `--overwrite` replaces it."""


def is_remote(path: str | Path) -> bool:
    """Whether `path` is in a bucket (`gs://...`), written without rename or lock."""
    return "://" in str(path)


def temporary_name(path: str | Path, role: str = "") -> str:
    """A name beside `path` for a write before the rename: `DIR/.tfbert-tmp-<pid>-NAME` (`role`: `old-NAME`)."""
    folder, name = os.path.split(os.path.abspath(path) if not is_remote(path) else str(path))
    return os.path.join(folder, f"{TEMPORARY_MARK}{os.getpid()}-{role + '-' if role else ''}{name}")


def final_name(path: str | Path) -> str:
    """The name `path` will have once in place: its own, without a `temporary_name` prefix."""
    return re.sub(rf"^{re.escape(TEMPORARY_MARK)}\d+-", "", Path(path).name)


def holds_something(path: str | Path) -> bool:
    """Whether `path` is a file (or link), or a folder that is not empty."""
    path = Path(path)
    return path.is_symlink() or (path.exists() and not path.is_dir()) or (path.is_dir() and any(path.iterdir()))


def run_kind(path: str | Path) -> str | None:
    """The resumable run a folder holds: `"pretrain"`, `"quickstart"`, or None (anything else, or nothing).

    A quickstart work folder has its marker; a pretraining run is what `tfbert.artifacts.folder_kind`
    says is one (the manifest's kind, or the files of a run written before the manifest).
    """
    path = Path(path)
    if not path.is_dir():
        return None
    if (path / QUICKSTART_MARKER).is_file():
        return "quickstart"
    return "pretrain" if folder_kind(path) == "pretraining-run" else None


def has_checkpoint(path: str | Path) -> bool:
    """Whether a run folder holds a complete checkpoint (TensorFlow's `checkpoint` index is written after one)."""
    return (Path(path) / CHECKPOINT_INDEX).is_file()


def _check_replaceable(path: str) -> None:
    """`--overwrite` never replaces the folder the command runs in, the home folder or one above them."""
    target = os.path.realpath(path)
    for kept in (os.getcwd(), os.path.expanduser("~")):
        if os.path.realpath(kept) == target or os.path.realpath(kept).startswith(target.rstrip(os.sep) + os.sep):
            raise OutputRefused(f"{path} holds the current or home folder ({kept}); --overwrite does not replace it, "
                                "give another output path")


def check_free(path: str | Path, *, flag: str, overwrite: bool = False, resumes: str | None = None) -> None:
    """Raises OutputExists when `path` holds something other than a `resumes` run and `overwrite` is off."""
    path = str(path)
    if is_remote(path) or not holds_something(path):
        return
    if overwrite:
        _check_replaceable(path)
        return
    if resumes is not None and run_kind(path) == resumes:
        return
    what = "folder" if os.path.isdir(path) else "file"
    if resumes is not None:
        what = f"{what} that is not a tfbert {resumes} run"
    raise OutputExists(f"{flag} {path} already exists (a {what}); nothing was changed: give another {flag}, or "
                       "add --overwrite to replace it")


def remove(path: str | Path) -> None:
    """Deletes a file, link or folder at `path` (nothing if there is none)."""
    path = str(path)
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    elif os.path.lexists(path):
        os.remove(path)


def replace(new: str | Path, target: str | Path) -> None:
    """Renames `new` to `target`; an existing `target` is moved aside first and deleted after, so `target`
    is at any moment the whole old output or the whole new one (or, for an instant, absent)."""
    with interrupts.deferred():
        _replace(str(new), str(target))


def _replace(new: str, target: str) -> None:
    if os.path.isdir(target) and not os.path.islink(target) and not os.listdir(target):
        os.rmdir(target)
    if not os.path.lexists(target):
        os.rename(new, target)
        return
    if not os.path.isdir(new) and not os.path.isdir(target):
        os.replace(new, target)
        return
    old = temporary_name(target, "old")
    os.rename(target, old)
    os.rename(new, target)
    remove(old)


def _make_parents(path: str) -> list[str]:
    """Creates the missing folders above `path`; returns them, outermost first."""
    created, folder = [], os.path.dirname(os.path.abspath(path))
    while not os.path.isdir(folder):
        created.insert(0, folder)
        folder = os.path.dirname(folder)
    for folder in created:
        os.makedirs(folder, exist_ok=True)
    return created


def _remove_empty(folders: list[str]) -> None:
    for folder in reversed(folders):
        with contextlib.suppress(OSError):
            os.rmdir(folder)


@contextlib.contextmanager
def _parents_made(path: str) -> Iterator[None]:
    """Makes the missing folders above `path`; those still empty at the end are removed."""
    created = _make_parents(path)
    try:
        yield
    finally:
        _remove_empty(created)


@contextlib.contextmanager
def locked(path: str | Path, flag: str = "--output", lock: bool = True) -> Iterator[None]:
    """Holds the lock of `path` (`OutputLock`; none with `lock=False`) with the folders above it made, and
    removed after where left empty.

    Example:
        >>> from tfbert.artifacts.saved_models import next_version_number
        >>> with locked("saved_models/sst2", flag="--name"):
        ...     next_version_number("saved_models/sst2")
        2
    """
    if is_remote(path):
        yield
        return
    with contextlib.ExitStack() as claimed:
        with interrupts.deferred():   # a signal meanwhile: once the lock is held, so leaving releases it
            claimed.enter_context(_parents_made(str(path)))
            claimed.enter_context(OutputLock(str(path), flag) if lock else contextlib.nullcontext())
        yield


def _pid_is_running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def remove_stale_temporaries(path: str | Path, new_is_whole: Callable[[str], bool] = os.path.lexists) -> list[str]:
    """Deletes what killed writers left beside `path` (`.tfbert-tmp-<pid>-NAME` of pids no longer running), but
    the old output a killed writer set aside (`.tfbert-tmp-<pid>-old-NAME`), which is put back (`restore_set_aside`)
    unless `new_is_whole(path)`: for an output made in one go, that the new one was renamed into place."""
    restore_set_aside(path, new_is_whole)
    removed = []
    for stale, _ in _killed_writers_files(path, rf"(\d+)-{re.escape(os.path.basename(os.path.abspath(path)))}"):
        remove(stale)
        removed.append(stale)
    return removed


def _killed_writers_files(path: str | Path, name: str) -> list[tuple[str, int]]:
    """`(file, pid)` beside `path` whose names are the temporary mark then the regex `name` (its group 1 a pid), of
    pids no longer running."""
    folder = os.path.dirname(os.path.abspath(path))
    pattern = re.compile(rf"{re.escape(TEMPORARY_MARK)}{name}$")
    found = []
    for entry in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        match = pattern.match(entry)
        if match and int(match[1]) != os.getpid() and not _pid_is_running(int(match[1])):
            found.append((os.path.join(folder, entry), int(match[1])))
    return found


def restore_set_aside(path: str | Path, new_is_whole: Callable[[str], bool]) -> list[str]:
    """What a writer killed while replacing `path` set aside: put back in place of `path` while `new_is_whole(path)`
    is false (what stands there is only part of the new output, and is deleted), else deleted (the new output is
    complete). Returns the notes saying what was put back, for the user. Call it holding `path`'s lock.

    `--overwrite` sets the old output aside (`.tfbert-tmp-<pid>-old-NAME`) until the new one is whole, so a
    `kill -9` meanwhile leaves the old one there, never deleted by the next command.
    """
    path = str(path)
    notes = []
    name = os.path.basename(os.path.abspath(path))
    for aside, pid in _killed_writers_files(path, rf"(\d+)-old-{re.escape(name)}"):
        if new_is_whole(path):
            remove(aside)
            continue
        remove(path)
        os.rename(aside, path)
        notes.append(f"note: {path} is back as it was: the process {pid} that was replacing it (--overwrite) was "
                     "killed before its new output was complete")
    return notes


# Errors that mean the disk or the file-size limit stopped a write, in OSError numbers and in the texts
# TensorFlow's errors carry (they have no errno).
WRITE_LIMITS = {errno.EFBIG: "the file is larger than the file-size limit (ulimit -f)",
                errno.ENOSPC: "no space left on the disk", errno.EDQUOT: "the disk quota is exceeded"}
WRITE_LIMIT_REMEDIES = {errno.EFBIG: "raise the limit (ulimit -f unlimited) and rerun the same command",
                        errno.ENOSPC: "free space (or write to another disk) and rerun the same command",
                        errno.EDQUOT: "free space within your quota and rerun the same command"}
WRITE_LIMIT_TEXTS = {"file too large": errno.EFBIG, "no space left": errno.ENOSPC,
                     "disk quota exceeded": errno.EDQUOT}


def write_limit_message(error: BaseException, written: str, target: str) -> str | None:
    """One line for a write stopped by the file-size limit or a full disk, naming the file (None: another error).

    `written` is the temporary name the output was being built under; the file is named under `target`.
    """
    number = getattr(error, "errno", None)
    text = str(error)
    if number not in WRITE_LIMITS:
        number = next((code for phrase, code in WRITE_LIMIT_TEXTS.items() if phrase in text.lower()), None)
    if number is None:
        return None
    file = getattr(error, "filename", None) or next(iter(re.findall(rf"{re.escape(written)}[^\s;:'\"]*", text)), None)
    file = str(file or written).replace(written, target)
    said = (text.strip().splitlines() or [type(error).__name__])[0].replace(written, target)
    return (f"cannot write {file}: {WRITE_LIMITS[number]} ({said}); nothing was written to {target}; "
            f"{WRITE_LIMIT_REMEDIES[number]}")


@contextlib.contextmanager
def new_output(path: str | Path, *, flag: str = "--output", overwrite: bool = False,
               lock: bool = True) -> Iterator[str]:
    """Claims `path` for an output made in one go; yields the temporary name to write it under.

    Refused (OutputExists) when `path` holds something and `overwrite` is off, before anything is
    written. On success the temporary output replaces `path` (`replace`); on any failure, Ctrl-C or
    SIGTERM it is deleted, with the folders made for it. `lock=False` when the caller holds a lock
    that covers `path` (export locks the model's folder to pick the version).

    Example:
        >>> with new_output("silver.tsv", overwrite=True) as staging:
        ...     Path(staging).write_text("a\\tb\\t0.5\\n")
        8
        >>> Path("silver.tsv").read_text()
        'a\\tb\\t0.5\\n'
    """
    path = str(path)
    if is_remote(path):
        yield path
        return
    check_free(path, flag=flag, overwrite=overwrite)
    try:
        with locked(path, flag, lock), _staged(path, flag, overwrite) as staging:
            yield staging
    except interrupts.Interrupted as interrupted:
        raise _unfinished(interrupted, path)
    except Exception as error:   # a library's own error for the signal: pybind11's RuntimeError, SentencePiece's
        if interrupts.received() is None:
            raise
        raise _unfinished(interrupts.received(), path) from error


def _unfinished(interrupted: interrupts.Interrupted, path: str) -> interrupts.Interrupted:
    """`interrupted`, saying (unless it says where already) that `path` was not written."""
    interrupted.detail = interrupted.detail or (f"before {path} was complete; nothing was written, rerun the same "
                                                "command")
    return interrupted


@contextlib.contextmanager
def _staged(path: str, flag: str, overwrite: bool) -> Iterator[str]:
    """The temporary name `new_output` yields (its lock held), renamed to `path` when the block succeeds."""
    remove_stale_temporaries(path)   # first: an old output a killed writer set aside comes back
    check_free(path, flag=flag, overwrite=overwrite)   # again: another writer may have finished meanwhile
    staging = temporary_name(path)
    try:
        yield staging
        interrupts.check()
        if not os.path.lexists(staging):
            raise OutputRefused(f"nothing was written to {path}")
        replace(staging, path)
    except Exception as error:   # OSError, and TensorFlow's write errors (not OSErrors)
        message = write_limit_message(error, staging, path)
        if message is None:
            raise
        raise OutputRefused(message) from None
    finally:
        remove(staging)


@contextlib.contextmanager
def beside_output(path: str | Path, names: tuple[str, ...], *, flag: str = "--output") -> Iterator[None]:
    """Claims the files or folders `names` that a command writes beside its output `path` (convert's
    `tokenizer/` and `tfbert.json`): each locked as an output, and those that were not there before are
    removed when the block fails or is interrupted. Use it inside `new_output(path)`.

    Example:
        >>> from tfbert.convert.writing import save_converted
        >>> from tfbert.finetuning.pretrained import load_pretrained_encoder, load_pretrained_tokenizer
        >>> encoder, tokenizer = load_pretrained_encoder("runs/bert"), load_pretrained_tokenizer("runs/bert")
        >>> with new_output("b/model.keras") as out, beside_output("b/model.keras", ("tokenizer",)):
        ...     save_converted(encoder, out, tokenizer)
        PosixPath('.../b/tokenizer')
        >>> sorted(path.name for path in Path("b").iterdir())
        ['model.keras', 'tokenizer']
    """
    if is_remote(path):
        yield
        return
    folder = os.path.dirname(os.path.abspath(path))
    targets = [os.path.join(folder, name) for name in names]
    with contextlib.ExitStack() as claimed:
        with interrupts.deferred():   # as in `locked`: every lock taken, or none
            for target in targets:
                claimed.enter_context(OutputLock(target, flag))
        new = [target for target in targets if not os.path.lexists(target)]
        try:
            yield
        except BaseException:
            for target in new:
                remove(target)
            raise


@contextlib.contextmanager
def run_folder(path: str | Path, kind: str, *, flag: str = "--model-dir", overwrite: bool = False) -> Iterator[str]:
    """Claims the folder of a resumable run of `kind`, written in place; yields `path`.

    A folder holding a `kind` run (`run_kind`) is resumed, an empty or missing one is started;
    anything else is refused (OutputExists). With `overwrite` a new run is started whatever the
    folder holds, which is moved aside until the block ends with a checkpoint in the folder. When the block
    fails (or is interrupted) before the folder holds a checkpoint, what it started is deleted and a folder
    moved aside comes back; after a `kill -9` the next `run_folder` of `path` does that (`restore_set_aside`).

    Example:
        >>> with run_folder("runs/sst2", "pretrain") as model_dir:    # a finetune model dir: not a pretraining run
        ...     pass
        Traceback (most recent call last):
        tfbert.outputs.OutputExists: --model-dir runs/sst2 already exists (a folder that is not a tfbert pretrain run); ...
    """
    path = str(path)
    if is_remote(path):
        yield path
        return
    with locked(path, flag):
        for note in restore_set_aside(path, has_checkpoint):   # first: what a killed --overwrite set aside
            print(note, file=sys.stderr)
        check_free(path, flag=flag, overwrite=overwrite, resumes=kind)
        remove_stale_temporaries(path, has_checkpoint)
        started = overwrite or not holds_something(path) or run_kind(path) != kind
        aside = None
        if started and holds_something(path):
            aside = temporary_name(path, "old")
            os.rename(path, aside)
        existed = os.path.isdir(path)
        os.makedirs(path, exist_ok=True)
        try:
            yield path
        except BaseException:
            if started and not has_checkpoint(path):
                _restart(path, existed, aside)
                aside = None
            raise
        finally:
            if aside is not None:
                remove(aside)


def _restart(path: str, existed: bool, aside: str | None) -> None:
    """Undoes a run that never wrote a checkpoint: the folder as it was (missing, empty, or the one set aside)."""
    remove(path)
    if aside is not None:
        os.rename(aside, path)
    elif existed:
        os.makedirs(path)
