"""MkDocs hook: the site's home page is README.md, its links to `docs/PAGE.md` pointed at the site's pages.

One front page, owned by README.md: the site shows it instead of keeping a copy that would drift.
"""

from __future__ import annotations

from pathlib import Path

from mkdocs.structure.files import File, Files

PAGE = "index.md"


def on_files(files: Files, config) -> Files:
    """Adds `index.md`, made from README.md."""
    readme = (Path(config.config_file_path).parent / "README.md").read_text(encoding="utf-8")
    files.append(File.generated(config, PAGE, content=readme.replace("](docs/", "](")))
    return files
