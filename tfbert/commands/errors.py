"""The one error type every `tfbert` command raises for a user's mistake, and the one line an OSError becomes."""

from __future__ import annotations

import errno
import os

from tfbert.outputs import WRITE_LIMIT_REMEDIES, WRITE_LIMITS


class CommandError(Exception):
    """A user-facing failure: printed as one line `tfbert COMMAND: error: ...`, exit status 2, no traceback."""


# What to do about an OSError, by its number (WRITE_LIMITS says what went wrong for the write limits).
REMEDIES = {
    **WRITE_LIMIT_REMEDIES,
    errno.EACCES: "give a path you may read and write, or change its permissions",
    errno.EPERM: "give a path you may read and write, or change its permissions",
    errno.EROFS: "give a path on a disk that can be written",
    errno.ENOENT: "check the path",
    errno.EISDIR: "give a file, not a folder",
    errno.ENOTDIR: "a part of the path is a file, not a folder: check the path",
    errno.ENAMETOOLONG: "give a shorter path",
}


def os_error_line(error: OSError) -> str:
    """One line for an OSError: the file (where the error names it), what went wrong, what to do.

    Example:
        >>> os_error_line(OSError(errno.EROFS, "Read-only file system", "runs/a"))
        'runs/a: read-only file system; give a path on a disk that can be written'
    """
    number = error.errno
    if number is None:   # an OSError raised with a message of its own: FileNotFoundError("... does not exist")
        return str(error)
    what = WRITE_LIMITS.get(number) or (error.strerror or str(error) or type(error).__name__).lower()
    files = [os.fsdecode(name) for name in (error.filename, error.filename2) if name is not None]
    if number in WRITE_LIMITS:
        where = f"cannot write {' or '.join(files)}" if files else "a write failed"
    else:
        where = " -> ".join(files) or "a file operation failed"
    remedy = REMEDIES.get(number)
    return f"{where}: {what}" + (f"; {remedy}" if remedy else "")


def one_line(error: BaseException) -> str:
    """The text of a command's error in one line: an OSError (or a `CommandError` that only repeats one, as
    `raise CommandError(str(error)) from None` does) as `os_error_line` words it."""
    context = error.__cause__ or error.__context__
    if not isinstance(error, OSError) and isinstance(context, OSError) and str(error) == str(context):
        error = context
    text = os_error_line(error) if isinstance(error, OSError) else str(error)
    return " ".join(line.strip() for line in text.splitlines() if line.strip())
