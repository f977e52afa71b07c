"""`tfbert` commands and guide pages run in forks of one process that imported tfbert's stack.

A guide page runs dozens of `tfbert ...` commands; each new interpreter spends seconds of CPU importing
TensorFlow, TF-Text and Keras before the command starts. The server imports that stack once (no TensorFlow op
runs in it, so forking is safe) and serves requests on a Unix socket: a client (a shim) sends its argv, working
directory, environment and standard streams (as file descriptors); the server forks, the child becomes the
request (`tfbert.cli.main(argv)`, or a Python script run as `__main__`) with those streams, folder and
environment, and its exit status goes back to the shim, which exits with it. What runs is the command's own
code; only the import is shared.

`tests/docs/test_guides.py` starts one server per test worker (`python command_server.py FOLDER`, the
`command_server` fixture) and runs each page's `run_page.py` through the `python` shim, so a page's Python
blocks and its `tfbert` commands start from the same import. `start(folder)` forks a server from the
calling process instead (`run_page.py` run by hand).
"""

from __future__ import annotations

import json
import os
import runpy
import socket
import sys
import threading
import traceback
from pathlib import Path

SOCKET_VARIABLE = "TFBERT_DOCS_COMMAND_SOCKET"
# The programs a shim can ask for: `tfbert ARGS...`, or `python SCRIPT ARGS...`.
PROGRAMS = ("tfbert", "python")
SHIM = '''#!{python} -S
# `{program}` run in tests/docs/command_server.py's fork of a ready interpreter.
import json, os, socket, sys
connection = socket.socket(socket.AF_UNIX)
connection.connect(os.environ["{variable}"])
request = json.dumps({{"program": "{program}", "argv": sys.argv[1:], "cwd": os.getcwd(),
                      "env": dict(os.environ)}}).encode()
socket.send_fds(connection, [len(request).to_bytes(8, "big") + request], [0, 1, 2])
status = b""
while len(status) < 4:
    chunk = connection.recv(4 - len(status))
    if not chunk:
        sys.exit("tfbert: the docs command server went away")
    status += chunk
sys.exit(int.from_bytes(status, "big"))
'''


def _receive(connection: socket.socket) -> tuple[dict, list[int]]:
    data, fds, _, _ = socket.recv_fds(connection, 1 << 20, 3)
    size = int.from_bytes(data[:8], "big")
    data = data[8:]
    while len(data) < size:
        data += connection.recv(size - len(data))
    return json.loads(data), fds


def _run_command(request: dict, fds: list[int]) -> None:
    """In the forked child: become the command, then exit with its status."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    sys.stdin, sys.stdout, sys.stderr = (open(target, mode, closefd=False, encoding="utf-8", errors="surrogateescape")
                                         for target, mode in ((0, "r"), (1, "w"), (2, "w")))
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
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


def _run_program(program: str, argv: list[str]) -> int | None:
    """Runs `tfbert ARGV` or `python ARGV` (a script and its arguments) in this process."""
    if program == "python":
        script = str(Path(argv[0]).resolve())
        sys.argv, sys.path[0] = list(argv), str(Path(script).parent)   # as `python SCRIPT` sets them
        runpy.run_path(script, run_name="__main__")
        return 0
    sys.argv = ["tfbert", *argv]
    from tfbert.cli import main

    return main(argv)


def _serve_one(connection: socket.socket) -> None:
    request, fds = _receive(connection)
    child = os.fork()
    if child == 0:
        _run_command(request, fds)
    for fd in fds:
        os.close(fd)

    def answer():
        status = os.waitstatus_to_exitcode(os.waitpid(child, 0)[1])
        connection.sendall((status if status >= 0 else 128 - status).to_bytes(4, "big"))
        connection.close()

    threading.Thread(target=answer, daemon=True).start()


def serve(listener: socket.socket) -> None:
    """Imports tfbert's stack, then forks a child per shim request on `listener`, forever."""
    import keras  # noqa: F401
    import tensorflow  # noqa: F401
    import tensorflow_text  # noqa: F401

    import tfbert.cli  # noqa: F401
    from tfbert.commands.gc_settings import set_aside_imported_objects

    set_aside_imported_objects()   # as the installed command does after its import; the children inherit it
    while True:
        _serve_one(listener.accept()[0])


def _listen(folder: Path) -> socket.socket:
    """The server's socket under `folder`, bound and listening (shims may connect while the server imports), and
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


if __name__ == "__main__":   # python command_server.py FOLDER: says "listening", then serves until killed
    listening = _listen(Path(sys.argv[1]))
    print("listening", flush=True)
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)   # nobody reads the pipe any more
    serve(listening)
