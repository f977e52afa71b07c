"""Reading tokenizer files with errors that name the file and the problem."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Union

PathLike = Union[str, "os.PathLike[str]"]


def existing_file(path: PathLike, what: str) -> Path:
    """Returns `path` as a Path, raising FileNotFoundError that says which `what` is missing."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{what} file not found: {path}")
    return path


def read_lines(path: PathLike, what: str) -> list[str]:
    """Lines of a UTF-8 text file without their line ends; ValueError when it is not UTF-8 or empty."""
    path = existing_file(path, what)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(f"{what} file {path} is not valid UTF-8: {error}") from None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    lines = [line[:-1] if line.endswith("\r") else line for line in lines]
    if not lines:
        raise ValueError(f"{what} file {path} is empty")
    return lines


def read_json(path: PathLike, what: str) -> Any:
    """Parsed JSON content; ValueError naming the file when it does not parse."""
    path = existing_file(path, what)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{what} file {path} is not valid JSON: {error}") from None
