"""`tfbert` commands and Python scripts run in forks of one process that imported tfbert's stack.

A new interpreter spends seconds of CPU importing TensorFlow, TF-Text and Keras before a command starts; the
guide pages run dozens of commands, and the process tests (`processes.py`: signals, kills) start one per test.
The server imports that stack once (no TensorFlow op runs in it, so forking is safe) and serves requests on a
Unix socket: a client sends its program, argv, working directory, environment and standard streams (as file
descriptors); the server forks, tells the client the child's pid, and the child becomes the request
(`tfbert.cli.main(argv, exiting=True)`, as the installed program runs it, or a Python script run as
`__main__`) with those streams, folder and environment; its exit code (minus the signal's number when a signal
ended it) goes back to the client. What runs is the command's own code, in a process of its own that signals
and kills reach; only the import is shared.

`shared_server()` starts one server per test process (`python command_server.py FOLDER`), on first use;
`start(folder)` forks one from the calling process instead (`tests/docs/run_page.py` run by hand). Clients: the
shims (`FOLDER/bin/tfbert`, first in PATH with `environment(FOLDER)`, and `FOLDER/python`) and `Command`.

Example:
    >>> command = Command.start(shared_server(), ["info"], stdio=(0, 1, 2))  # doctest: +SKIP
    >>> command.wait(timeout_s=60)  # doctest: +SKIP
    0
"""

from __future__ import annotations

import atexit
import json
import os
import runpy
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import traceback
from pathlib import Path
from typing import Sequence

SOCKET_VARIABLE = "TFBERT_DOCS_COMMAND_SOCKET"
SHIM = '''#!{python} -S
# `{program}` run in tests/command_server.py's fork of a ready interpreter.
import json, os, socket, sys
connection = socket.socket(socket.AF_UNIX)
connection.connect(os.environ["{variable}"])
request = json.dumps({{"program": "{program}", "argv": sys.argv[1:], "cwd": os.getcwd(),
                      "env": dict(os.environ)}}).encode()
socket.send_fds(connection, [len(request).to_bytes(8, "big") + request], [0, 1, 2])
answer = b""
while len(answer) < 8:   # the child's pid, then its exit code
    chunk = connection.recv(8 - len(answer))
    if not chunk:
        sys.exit("{program}: the tests' command server went away")
    answer += chunk
code = int.from_bytes(answer[4:], "big", signed=True)
sys.exit(code if code >= 0 else 128 - code)   # as a shell reports a child a signal ended
'''


def _receive(connection: socket.socket) -> tuple[dict, list[int]]:
    data, fds, _, _ = socket.recv_fds(connection, 1 << 20, 3)
    size = int.from_bytes(data[:8], "big")
    data = data[8:]
    while len(data) < size:
        data += connection.recv(size - len(data))
    return json.loads(data), fds


def _run_program(program: str, argv: list[str]) -> int | None:
    """Runs `tfbert ARGV` or `python ARGV` (a script and its arguments) in this process."""
    if program == "python":
        script = str(Path(argv[0]).resolve())
        sys.argv = list(argv)
        # as `python SCRIPT` starts: the script's folder first, then PYTHONPATH's entries
        sys.path[:0] = [str(Path(script).parent), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
        runpy.run_path(script, run_name="__main__")
        return 0
    sys.argv = ["tfbert", *argv]
    from tfbert.cli import main

    return main(argv, exiting=True)


def _run_request(request: dict, fds: list[int]) -> None:
    """In the forked child: become the request, then exit with its status."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    sys.stdin, sys.stdout, sys.stderr = (open(target, mode, closefd=False, encoding="utf-8", errors="surrogateescape")
                                         for target, mode in ((0, "r"), (1, "w"), (2, "w")))
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    if request.get("log_level"):   # Python's logging shown, as `processes.py` asks
        import logging

        logging.basicConfig(level=request["log_level"], format="%(message)s")
    try:
        status = _run_program(request["program"], request["argv"]) or 0
    except SystemExit as stop:
        status = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
        if not isinstance(stop.code, (int, type(None))):
            print(stop.code, file=sys.stderr)
    except BaseException:   # as the interpreter would: the traceback, then status 1 (not the server's silent exit)
        traceback.print_exc()
        status = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def _serve_one(connection: socket.socket) -> None:
    request, fds = _receive(connection)
    child = os.fork()
    if child == 0:
        _run_request(request, fds)
    for fd in fds:
        os.close(fd)
    connection.sendall(child.to_bytes(4, "big"))

    def answer():
        code = os.waitstatus_to_exitcode(os.waitpid(child, 0)[1])
        connection.sendall(code.to_bytes(4, "big", signed=True))
        connection.close()

    threading.Thread(target=answer, daemon=True).start()


def serve(listener: socket.socket) -> None:
    """Imports tfbert's stack, then forks a child per request on `listener`, forever."""
    import keras  # noqa: F401
    import tensorflow  # noqa: F401
    import tensorflow_text  # noqa: F401

    import tfbert.cli  # noqa: F401
    from tfbert.commands.gc_settings import set_aside_imported_objects

    set_aside_imported_objects()   # as the installed command does after its import; the children inherit it
    while True:
        _serve_one(listener.accept()[0])


def _listen(folder: Path) -> socket.socket:
    """The server's socket under `folder`, bound and listening (clients may connect while the server imports), and
    the shims: `folder/bin/tfbert` (first in PATH, `environment(folder)`) and `folder/python` (not in PATH)."""
    for program, shim in (("tfbert", folder / "bin" / "tfbert"), ("python", folder / "python")):
        shim.parent.mkdir(parents=True, exist_ok=True)
        shim.write_text(SHIM.format(python=sys.executable, variable=SOCKET_VARIABLE, program=program),
                        encoding="utf-8")
        shim.chmod(0o755)
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(folder / "tfbert.sock"))
    listener.listen()
    return listener


def environment(folder: Path) -> dict[str, str]:
    """The variables that send a process's `tfbert` commands to the server listening under `folder`."""
    return {SOCKET_VARIABLE: str(folder / "tfbert.sock"),
            "PATH": f"{folder / 'bin'}{os.pathsep}{os.environ['PATH']}"}


def start(folder: Path) -> int:
    """Forks a server from this process (socket and shims under `folder`), sends this process's children's
    `tfbert` commands to it, and returns the server's pid."""
    listener = _listen(folder)
    server = os.fork()
    if server == 0:
        try:
            serve(listener)
        finally:
            os._exit(1)
    listener.close()
    os.environ.update(environment(folder))
    return server


def checkout_environment() -> dict[str, str]:
    """This process's environment with the checkout first in PYTHONPATH (tfbert imported from it)."""
    paths = [str(Path(__file__).resolve().parents[1]), os.environ.get("PYTHONPATH")]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, paths))}


_shared: dict[int, Path] = {}   # this process's server folder, by pid (a forked child starts its own)


def shared_server() -> Path:
    """The folder of this process's server, started on the first call (`python command_server.py FOLDER`, with
    this process's environment and the checkout first in PYTHONPATH), killed and its folder removed when this
    process exits."""
    if os.getpid() not in _shared:
        folder = Path(tempfile.mkdtemp(prefix="tfbert-commands-"))
        server = subprocess.Popen([sys.executable, __file__, str(folder)], stdout=subprocess.PIPE, text=True,
                                  env=checkout_environment())
        assert server.stdout.readline().strip() == "listening", "the tests' command server did not start"
        atexit.register(_stop, server, folder)
        _shared[os.getpid()] = folder
    return _shared[os.getpid()]


def _stop(server: subprocess.Popen, folder: Path) -> None:
    server.kill()
    server.wait()
    shutil.rmtree(folder, ignore_errors=True)


class Command:
    """A request running in a fork of the server under `folder`: its `pid` (signals and kills reach the command
    itself), `poll()` and `wait()` for its exit code (minus the signal's number when a signal ended it), as
    `subprocess.Popen` has them.

    >>> command = Command.start(shared_server(), ["info"], stdio=(0, 1, 2))  # doctest: +SKIP
    """

    def __init__(self, connection: socket.socket):
        self._connection = connection
        self.pid = int.from_bytes(self._read(4), "big")
        self.returncode: int | None = None

    @classmethod
    def start(cls, folder: Path, argv: Sequence[str], *, stdio: Sequence[int], program: str = "tfbert",
              cwd: str | Path | None = None, env: dict[str, str] | None = None,
              log_level: str | None = None) -> "Command":
        """Sends `program ARGV` to the server under `folder`, with `stdio` (three file descriptors) as its streams."""
        connection = socket.socket(socket.AF_UNIX)
        connection.connect(str(folder / "tfbert.sock"))
        request = json.dumps({"program": program, "argv": [str(word) for word in argv], "cwd": str(cwd or os.getcwd()),
                              "env": dict(os.environ if env is None else env), "log_level": log_level}).encode()
        socket.send_fds(connection, [len(request).to_bytes(8, "big") + request], list(stdio))
        return cls(connection)

    def _read(self, size: int) -> bytes:
        data = b""
        while len(data) < size:
            chunk = self._connection.recv(size - len(data))
            if not chunk:
                raise RuntimeError("the tests' command server went away")
            data += chunk
        return data

    def poll(self) -> int | None:
        """The exit code if the command has ended, else None."""
        return self.wait(timeout_s=0) if self.returncode is None else self.returncode

    def wait(self, timeout_s: float | None = None) -> int | None:
        """The exit code, once the command ends; None if it has not within `timeout_s` (0: do not wait)."""
        if self.returncode is None and select.select([self._connection], [], [], timeout_s)[0]:
            self.returncode = int.from_bytes(self._read(4), "big", signed=True)
            self._connection.close()
        return self.returncode

    def send_signal(self, signal_number: int) -> None:
        """Sends `signal_number` to the command (nothing once it has ended)."""
        if self.poll() is None:
            os.kill(self.pid, signal_number)


def _die_with_parent() -> None:
    """Linux: the kernel sends this process SIGKILL when its parent (the test worker) ends, however it ends."""
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, 9)   # PR_SET_PDEATHSIG, SIGKILL


if __name__ == "__main__":   # python command_server.py FOLDER: says "listening", then serves until killed
    _die_with_parent()
    listening = _listen(Path(sys.argv[1]))
    print("listening", flush=True)
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)   # nobody reads the pipe any more
    serve(listening)
