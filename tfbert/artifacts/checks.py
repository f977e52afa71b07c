"""What a file in a folder says is checked before it is used: its paths stay inside the folder, its fields
have their types and ranges. Each failure is one `FileContentError` line naming the file, the field, what was
found and what to do; no library checks JSON fields against such rules with messages like these, so the few
checks are written here (the same ones serve every file kind, `tfbert.artifacts.files`).

Example:
    >>> from pathlib import Path
    >>> integer({"sequence_length": "long"}, "sequence_length", Path("run/preprocessor.json"), 2, 65536)
    Traceback (most recent call last):
    ...
    tfbert.artifacts.checks.FileContentError: run/preprocessor.json: 'sequence_length' is 'long', expected ...
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Mapping

REWRITE = "rewrite the file with the command that made the folder (or remove it and rerun that command)"
# A Hugging Face folder's files: written by transformers (or tfbert convert to-huggingface), read here.
REWRITE_FOREIGN = "fix that field, or download or convert the model folder again"


class FileContentError(ValueError):
    """A file whose content tfbert refuses: one line, `FILE: 'FIELD' is FOUND, expected WHAT; REMEDY`."""

    def __init__(self, path: str | os.PathLike, field: str | None, problem: str, remedy: str = REWRITE):
        where = f"{path}: '{field}' " if field else f"{path}: "
        super().__init__(f"{where}{problem}; {remedy}")
        self.path, self.field, self.problem = Path(path), field, problem

    def with_remedy(self, remedy: str) -> "FileContentError":
        """The same error with another remedy (a file another library wrote is not rewritten by tfbert)."""
        return FileContentError(self.path, self.field, self.problem, remedy)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def read_json(path: Path, remedy: str = REWRITE) -> Any:
    """The JSON in `path`; `FileContentError` naming it where it cannot be read or parsed."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise FileContentError(path, None, f"not valid JSON ({error.msg} at line {error.lineno} column "
                                           f"{error.colno})", remedy) from None
    except UnicodeDecodeError as error:
        raise FileContentError(path, None, f"not UTF-8 text (byte {error.start})", remedy) from None
    except OSError as error:
        raise FileContentError(path, None, f"cannot be read ({error.strerror or error})", remedy) from None


def json_object(path: Path, remedy: str = REWRITE) -> dict[str, Any]:
    """`read_json(path)`, which must be a JSON object."""
    data = read_json(path, remedy)
    if not isinstance(data, dict):
        raise FileContentError(path, None, f"holds {type(data).__name__} {_shown(data)}, expected a JSON object",
                               remedy)
    return data


def typed(data: Mapping[str, Any], field: str, path: Path, types: tuple[type, ...], expected: str, *,
          required: bool = False, remedy: str = REWRITE) -> Any:
    """`data[field]` where it is one of `types` (None where absent or null and not `required`)."""
    value = data.get(field)
    if value is None and not required:
        return None
    if isinstance(value, bool) and bool not in types or not isinstance(value, types):
        found = "missing" if field not in data else f"{_shown(value)}"
        raise FileContentError(path, field, f"is {found}, expected {expected}", remedy)
    return value


def integer(data: Mapping[str, Any], field: str, path: Path, low: int, high: int, *, required: bool = True,
            remedy: str = REWRITE) -> int | None:
    """`data[field]` where it is a whole number in `low..high` (None where absent and not `required`)."""
    value = data.get(field)
    if value is None and not required:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        found = "missing" if field not in data else _shown(value)
        raise FileContentError(path, field, f"is {found}, expected a whole number from {low} to {high}", remedy)
    return value


def one_of(data: Mapping[str, Any], field: str, path: Path, allowed: tuple, *, required: bool = True,
           remedy: str = REWRITE) -> Any:
    """`data[field]` where it is one of `allowed` (None where absent and not `required`)."""
    value = data.get(field)
    if value is None and not required:
        return None
    if isinstance(value, bool) or value not in allowed:
        found = "missing" if field not in data else _shown(value)
        raise FileContentError(path, field, f"is {found}, expected one of {', '.join(map(str, allowed))}", remedy)
    return value


def strings(data: Mapping[str, Any], field: str, path: Path, *, required: bool = False,
            remedy: str = REWRITE) -> list[str] | None:
    """`data[field]` where it is a list of strings (None where absent and not `required`)."""
    value = typed(data, field, path, (list,), "a list of strings", required=required, remedy=remedy)
    if value is not None and not all(isinstance(item, str) for item in value):
        raise FileContentError(path, field, f"is {_shown(value)}, expected a list of strings", remedy)
    return value


def only_keys(data: Mapping[str, Any], path: Path, allowed: tuple[str, ...], where: str,
              remedy: str = REWRITE) -> None:
    """Refuses a key of `data` (the mapping at `where`) that is not in `allowed`."""
    unknown = sorted(set(data) - set(allowed))
    if unknown:
        raise FileContentError(path, f"{where}.{unknown[0]}" if where else unknown[0],
                               f"is an unknown key, expected one of {', '.join(allowed)}", remedy)


def check_tokenizer_fits(vocabulary_size: int | None, sequence_length: int | None, config: Mapping[str, Any],
                         tokenizer: str, model: str) -> None:
    """Refuses a tokenizer with more tokens than the model's token table, or a length past its positions
    (`config`: an encoder config mapping). Ids past the table would read other rows or fail in a gather.

    Example:
        >>> check_tokenizer_fits(30522, 128, {"vocab_size": 1000, "max_positions": 512}, "--tokenizer big/", "runs/a")
        Traceback (most recent call last):
        ...
        ValueError: --tokenizer big/ has 30522 tokens but the token table of runs/a has 1000 rows; give the ...
    """
    rows = config.get("vocab_size")
    positions = (config.get("max_positions") or 0) - (config.get("position_offset") or 0)
    if vocabulary_size is not None and rows and vocabulary_size > rows:
        raise ValueError(f"{tokenizer} has {vocabulary_size} tokens but the token table of {model} has {rows} rows; "
                         "give the tokenizer the model was trained with (or one that extends it: tfbert vocab add, "
                         "then tfbert finetune)")
    if sequence_length is not None and positions > 0 and sequence_length > positions:
        raise ValueError(f"{tokenizer}: sequence_length {sequence_length} is past the {positions} positions of "
                         f"{model}; give a sequence length of at most {positions}")


def inside(folder: Path, relative: Any, path: Path, field: str, remedy: str = REWRITE) -> Path:
    """`folder / relative`, where `relative` is a relative path that stays inside `folder`: no absolute path,
    no `..`, no link that leads out of the folder."""
    if not isinstance(relative, str) or not relative:
        raise FileContentError(path, field, f"is {_shown(relative)}, expected a file name inside {folder}", remedy)
    if os.path.isabs(relative) or ".." in Path(relative).parts or "\\" in relative:
        raise FileContentError(path, field, f"is {relative!r}, which leads out of {folder}; expected a file name "
                                            "inside the folder", remedy)
    target = folder / relative
    if not target.resolve().is_relative_to(folder.resolve()):
        raise FileContentError(path, field, f"is {relative!r}, a link that leads out of {folder}; expected a file "
                                            "inside the folder", remedy)
    return target
