"""Griffe extension: tfbert's docstrings head their doctests `Example:`; Google style names the section `Examples:`.

Without this the API reference would render the `>>>` lines as prose (and read `[0, 1]` outputs as links).
"""

from __future__ import annotations

import re

import griffe

HEADING = re.compile(r"^(\s*)Example:\s*$", re.MULTILINE)


class ExamplesSection(griffe.Extension):
    """Renames each docstring's `Example:` heading to `Examples:` before the docstring is parsed."""

    def on_instance(self, *, obj: griffe.Object, **kwargs) -> None:
        """Called for every module, class, function and attribute griffe loads."""
        if obj.docstring is not None:
            obj.docstring.value = HEADING.sub(r"\1Examples:", obj.docstring.value)
