"""The README's feature table, written from the architecture registry and the configs each family ships.

`python docs/hooks/feature_table.py` prints it; `tests/docs/test_readme.py` checks that README.md holds exactly
this table, so a family or config added to the registry cannot be missing from the front page.
"""

from __future__ import annotations

FORMAT_NAMES = {"huggingface": "Hugging Face", "tf1": "Google TF1", "keras_hub": "keras-hub"}


def feature_table() -> str:
    """One row per registered family: what it is, its configs, objectives, tokenizer and checkpoint formats."""
    from tfbert import architectures
    from tfbert.config import configs_of

    rows = ["| family | what | configs | objectives | tokenizer | reads checkpoints of |", "|---|---|---|---|---|---|"]
    for name in architectures.names():
        spec = architectures.get(name)
        title, _, what = spec.summary.partition(": ")
        configs = ", ".join(f"`{config}`" for config in configs_of(name))
        formats = ", ".join(FORMAT_NAMES.get(key, key) for key in spec.formats)
        rows.append(f"| {title} (`{name}`) | {what} | {configs} | {' + '.join(spec.objectives)} | "
                    f"{spec.tokenizer} | {formats} |")
    return "\n".join(rows)


if __name__ == "__main__":
    print(feature_table())
