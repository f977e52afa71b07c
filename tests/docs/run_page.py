"""Runs one page's blocks in order in this interpreter: `python run_page.py BLOCKS.json`.

Python blocks share one namespace (as a reader pasting them into one session would); bash blocks run with
`bash -euo pipefail` and this interpreter's `bin/` first in PATH, so `tfbert` is the installed command.
A failing block stops the run with its page and line.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
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
