"""The texts a Python function was given, as a list: a bare string is one text, and a `None` or a number
among them is a `TypeError` naming its index.

Without this, `predict_texts(model, "abc")` iterates the string and predicts 'a', 'b' and 'c', and
`[None]` fails deep inside with an `AttributeError`.

    >>> text_list("a gripping film")
    ['a gripping film']
    >>> text_list(["a", None])
    Traceback (most recent call last):
    TypeError: texts[1] is None; give a string for every text
"""

from __future__ import annotations

from typing import Any, Iterable


def text_list(texts: str | Iterable[Any], name: str = "texts", allow_tuples: bool = False) -> list:
    """`texts` as a list (a `str` is one text); raises `TypeError` naming the index of an item that is not a string
    (or, with `allow_tuples`, a tuple or list of strings, as pair and multiple-choice examples are)."""
    if isinstance(texts, str):
        return [texts]
    if texts is None or isinstance(texts, (bytes, int, float)):
        raise TypeError(f"{name} is {type(texts).__name__}; give a string or a list of strings")
    items = list(texts)
    for index, item in enumerate(items):
        if isinstance(item, str) or (allow_tuples and isinstance(item, (tuple, list))):
            continue
        kind = "None" if item is None else f"{type(item).__name__} {item!r:.40}"
        raise TypeError(f"{name}[{index}] is {kind}; give a string for every text")
    return items
