"""SIGINT and SIGTERM as an exception, so a command stops where it is and removes what it had not finished.

Python turns SIGINT into `KeyboardInterrupt` but lets SIGTERM kill the process on the spot, before
any cleanup; `signals_raise()` makes both raise `Interrupted` (a `KeyboardInterrupt`), which the
command line reports in one line and exits 130 / 143 (128 + the signal's number). A second signal
while the first unwinds is only recorded: cleanup is not cut short. A signal that lands in a finalizer
(`__del__`) is raised once the finalizer has returned, not inside it. The signal is also recorded, so
`check()` catches one that library code swallowed before an output is put in place.

    >>> from tfbert.cli import main
    >>> with signals_raise():
    ...     main(["configs", "--architecture", "xlm"])   # Ctrl-C or `kill PID`: Interrupted, .exit_status 130 or 143
    config               arch         L     H     E  sharing      parameters
    xlm_mlm_enfr_1024 ...
    xlm_tiny             xlm          2   128   128  none          4,302,592
    0
"""

from __future__ import annotations

import _thread
import contextlib
import gc
import signal
import threading
import weakref
from typing import Iterator

SIGNALS = (signal.SIGINT, signal.SIGTERM)
_FINALIZE_CALL = weakref.finalize.__call__.__code__

_received: list[int] = []


class Interrupted(KeyboardInterrupt):
    """A command stopped by SIGINT or SIGTERM; `detail` says where it stopped and what a rerun does."""

    def __init__(self, signal_number: int, detail: str | None = None):
        super().__init__(signal.Signals(signal_number).name)
        self.signal_number = signal_number
        self.detail = detail

    @property
    def exit_status(self) -> int:
        return 128 + self.signal_number

    def message(self) -> str:
        """`interrupted by SIGTERM at step 40; rerun ...`: the signal, then `detail` (which begins with where)."""
        name = signal.Signals(self.signal_number).name
        return f"interrupted by {name} {self.detail}" if self.detail else f"interrupted by {name}"


# The signals received since `signals_raise` began, whether one was raised, how deep in `deferred` blocks, and
# whether the handler put its own call off until a finalizer returns (`_in_finalizer`).
_state = {"raised": False, "deferring": 0, "postponed": False}


def _raise(signal_number: int, frame) -> None:
    if not _state["postponed"]:
        _received.append(signal_number)
    _state["postponed"] = _in_finalizer(frame)
    if _state["postponed"]:   # the handler runs again a moment later, until the finalizer has returned
        threading.Timer(0.001, _call_again, (signal_number,)).start()
    elif not _state["raised"] and not _state["deferring"]:
        _state["raised"] = True
        raise Interrupted(signal_number)


def _call_again(signal_number: int) -> None:
    """Has the main thread call `_raise` for `signal_number` again (nothing once `signals_raise` has ended)."""
    if signal.getsignal(signal_number) is _raise:
        _thread.interrupt_main(signal_number)


def _in_finalizer(frame) -> bool:
    """Whether `frame` runs in a finalizer (`__del__`, a gc callback, a `weakref.finalize`) or below one.

    Python prints and drops an exception raised there and the finalizer's cleanup stays half done:
    TensorFlow's function deleters (`AtomicFunction.__del__`) cut short leave its function registry
    half updated, the likely cause of a SIGSEGV after a Ctrl-C during `tfbert export`. Python has no
    call that tells, hence the walk up the frames.
    """
    finalizers = {getattr(callback, "__code__", None) for callback in gc.callbacks} | {_FINALIZE_CALL}
    while frame is not None:
        if frame.f_code.co_name == "__del__" or frame.f_code in finalizers:
            return True
        frame = frame.f_back
    return False


@contextlib.contextmanager
def signals_raise(then_ignore: bool = False) -> Iterator[None]:
    """Within the block SIGINT and SIGTERM raise `Interrupted` (the first one; later ones are recorded).

    The block's end restores the handlers it found, or with `then_ignore` leaves both signals ignored:
    for a process that exits after the block (the `tfbert` program). Its output is in place or cleaned
    up by then, and a signal during the exit would raise `KeyboardInterrupt` (Python's SIGINT handler)
    inside TensorFlow's teardown, its finalizers and atexit functions, which can crash with SIGSEGV.
    """
    previous = {number: signal.getsignal(number) for number in SIGNALS}
    _received.clear()
    _state.update(raised=False, deferring=0, postponed=False)
    for number in SIGNALS:
        signal.signal(number, _raise)
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, signal.SIG_IGN if then_ignore else handler)


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """A block that a signal does not cut: one that comes meanwhile raises `Interrupted` when it ends.

    For writes that must finish once begun: a checkpoint, the renames that put an output in place.

    Example:
        >>> from pathlib import Path
        >>> with deferred():
        ...     Path("model.json").write_text("{}")   # a signal meanwhile raises Interrupted after the write
        2
    """
    _state["deferring"] += 1
    try:
        yield
    finally:
        _state["deferring"] -= 1
    if not _state["deferring"] and _received and not _state["raised"]:
        _state["raised"] = True
        raise Interrupted(_received[0])


def received() -> Interrupted | None:
    """The first signal since `signals_raise` began, as an `Interrupted` (None: none came)."""
    return Interrupted(_received[0]) if _received else None


def check() -> None:
    """Raises `Interrupted` if a signal came (and was swallowed) since `signals_raise` began."""
    if _received:
        raise Interrupted(_received[0])


def as_interrupted(error: KeyboardInterrupt) -> Interrupted:
    """`error` itself, or a plain KeyboardInterrupt (raised before `signals_raise`) as a SIGINT."""
    return error if isinstance(error, Interrupted) else Interrupted(signal.SIGINT)
