"""Runs one page's blocks in order in this interpreter: `python run_page.py BLOCKS.json`.

Python blocks share one namespace (as a reader pasting them into one session would); bash blocks run with
`bash -euo pipefail` and this interpreter's `bin/` first in PATH, and their `tfbert` commands run in forks of
one interpreter that imported tfbert's stack (`tests/command_server.py`; the same `tfbert.cli.main`, seconds of
import saved per command): the server named by `$TFBERT_DOCS_COMMAND_SOCKET` (the tests', which also runs this
script in a fork, `python` shim), else one this script starts. A failing block stops the run with its page
and line.
"""

import atexit
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # tests/, for command_server
import command_server  # noqa: E402

os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
if command_server.SOCKET_VARIABLE in os.environ:   # the tests' server: its `tfbert` before this interpreter's
    os.environ.update(command_server.environment(Path(os.environ[command_server.SOCKET_VARIABLE]).parent))
else:   # run by hand: this page's own server
    server_folder = Path(tempfile.mkdtemp(prefix="tfbert-commands-"))
    server = command_server.start(server_folder)
    atexit.register(lambda: (os.kill(server, signal.SIGKILL), os.waitpid(server, 0),
                             shutil.rmtree(server_folder, ignore_errors=True)))


namespace = {"__name__": "__main__"}
for block in json.loads(Path(sys.argv[1]).read_text(encoding="utf-8")):
    where = f"{block['page']}:{block['line']}"
    print(f"--- {where} ({block['language']})", flush=True)
    if block["language"] == "python":
        exec(compile(block["code"], where, "exec"), namespace)
    else:
        result = subprocess.run(["bash", "-euo", "pipefail", "-c", block["code"]])
        if result.returncode:
            sys.exit(f"{where}: the bash block exited with status {result.returncode}")
