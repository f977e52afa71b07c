"""The README's feature table, written from the architecture registry and the shipped configs.

`python docs/hooks/feature_table.py` prints it; `tests/docs/test_readme.py` checks that README.md holds exactly
this table, so a family or config added to the registry cannot be missing from the front page.
"""

from __future__ import annotations

import yaml

FORMAT_NAMES = {"huggingface": "Hugging Face", "tf1": "Google TF1", "keras_hub": "keras-hub"}


def feature_table() -> str:
    """One row per registered family: what it is, its configs, objectives, tokenizer and checkpoint formats."""
    from tfbert import architectures
    from tfbert.config import available_configs

    by_family = configs_by_family(available_configs())
    rows = ["| family | what | configs | objectives | tokenizer | reads checkpoints of |", "|---|---|---|---|---|---|"]
    for name in architectures.names():
        spec = architectures.get(name)
        title, _, what = spec.summary.partition(": ")
        configs = ", ".join(f"`{config}`" for config in by_family.get(name, []))
        formats = ", ".join(FORMAT_NAMES.get(key, key) for key in spec.formats)
        rows.append(f"| {title} (`{name}`) | {what} | {configs} | {' + '.join(spec.objectives)} | "
                    f"{spec.tokenizer} | {formats} |")
    return "\n".join(rows)


def configs_by_family(names: list[str]) -> dict[str, list[str]]:
    """The shipped config names grouped by the `architecture:` each YAML file names."""
    import importlib.resources

    folder = importlib.resources.files("tfbert.configs")
    grouped: dict[str, list[str]] = {}
    for name in names:
        architecture = yaml.safe_load((folder / f"{name}.yaml").read_text(encoding="utf-8"))["architecture"]
        grouped.setdefault(architecture, []).append(name)
    return grouped


if __name__ == "__main__":
    print(feature_table())
