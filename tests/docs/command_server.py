"""`tfbert` commands of the guides' bash blocks, run by forking one process that imported tfbert's stack.

A guide page runs dozens of `tfbert ...` commands; each new interpreter spends seconds of CPU importing
TensorFlow, TF-Text and Keras before the command starts. `run_page.py` starts this server once per page,
before any block runs (no TensorFlow op has run in it, so forking is safe), and puts a `tfbert` shim first in
PATH. The shim sends its argv, working directory, environment and standard streams (as file descriptors)
over a Unix socket; the server forks, the child becomes that command (`tfbert.cli.main(argv)` with those
streams, folder and environment) and its exit status goes back to the shim, which exits with it. What runs
is the installed command's own code; only the import is shared.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
import traceback
from pathlib import Path

SOCKET_VARIABLE = "TFBERT_DOCS_COMMAND_SOCKET"
SHIM = '''#!{python} -S
# The guides' `tfbert`: runs the command in tests/docs/command_server.py's fork of a ready interpreter.
import array, json, os, socket, sys
connection = socket.socket(socket.AF_UNIX)
connection.connect(os.environ["{variable}"])
request = json.dumps({{"argv": sys.argv[1:], "cwd": os.getcwd(), "env": dict(os.environ)}}).encode()
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
    sys.argv = ["tfbert", *request["argv"]]
    from tfbert.cli import main

    try:
        status = main(request["argv"]) or 0
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


def start(folder: Path) -> int:
    """Forks the server (socket and shim under `folder`), sets PATH and the socket variable for this process's
    children, and returns the server's pid."""
    path = str(folder / "tfbert.sock")
    shim = folder / "bin" / "tfbert"
    shim.parent.mkdir(parents=True, exist_ok=True)
    shim.write_text(SHIM.format(python=sys.executable, variable=SOCKET_VARIABLE), encoding="utf-8")
    shim.chmod(0o755)
    listener = socket.socket(socket.AF_UNIX)   # bound before the fork: shims may connect while the server imports
    listener.bind(path)
    listener.listen()
    server = os.fork()
    if server == 0:
        try:
            serve(listener)
        finally:
            os._exit(1)
    listener.close()
    os.environ[SOCKET_VARIABLE] = path
    os.environ["PATH"] = f"{shim.parent}{os.pathsep}{os.environ['PATH']}"
    return server
