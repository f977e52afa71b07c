"""Measurements in fresh processes: run a child command and read the JSON object it printed last.

    >>> import sys
    >>> child_json([sys.executable, "-c", "print('log line'); print('{\\"cpu\\": 1.5}')"])
    {'cpu': 1.5}
"""

from __future__ import annotations

import json
import subprocess
from typing import Sequence


def child_json(command: Sequence[str]) -> dict:
    """Runs `command` (it must succeed) and returns the JSON object on its last line of output (TensorFlow
    may print before it)."""
    done = subprocess.run(list(command), capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])
