"""A signature's outputs for one example as the dict `SavedModelClient` returns (see `predict_texts`).

Example:
    >>> import numpy as np
    >>> decode("regression", {"score": np.array([[4.5]])}, 0, ("a man plays",), top_k=None)
    {'score': 4.5}
    >>> decode("classification", {"label": np.array([b"positive"]), "label_id": np.array([1]),
    ...                           "probabilities": np.array([[0.25, 0.75]])}, 0, ("a gripping film",), None,
    ...        label_names=["negative", "positive"])
    {'label': 'positive', 'label_id': 1, 'probabilities': {'negative': 0.25, 'positive': 0.75}}
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np


def decode(task: str, outputs: Mapping[str, np.ndarray], row: int, example: tuple, top_k: int | None,
           label_names: Sequence[str] | None = None) -> dict:
    """Row `row` of `outputs` (a `task` signature's, on `example`) as plain Python values."""
    return _DECODERS[task](outputs, row, example, top_k, label_names)


def _text(value) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _fill_mask(outputs, row, example, top_k, label_names) -> dict:
    masks = []
    for slot, position in enumerate(outputs["mask_positions"][row]):
        if position < 0:
            continue
        predictions = [{"token": _text(token), "token_id": int(token_id), "score": float(score)}
                       for token, token_id, score in zip(outputs["tokens"][row, slot], outputs["token_ids"][row, slot],
                                                         outputs["scores"][row, slot])]
        masks.append({"position": int(position), "predictions": predictions[:top_k]})
    return {"masks": masks}


def _multiple_choice(outputs, row, example, top_k, label_names) -> dict:
    choice_id = int(outputs["choice_id"][row])
    return {"choice": example[1][choice_id], "choice_id": choice_id,
            "probabilities": [float(value) for value in outputs["probabilities"][row]]}


def _classification(outputs, row, example, top_k, label_names) -> dict:
    probabilities = outputs["probabilities"][row]
    names = label_names if label_names and len(label_names) == len(probabilities) else \
        [str(index) for index in range(len(probabilities))]
    return {"label": _text(outputs["label"][row]), "label_id": int(outputs["label_id"][row]),
            "probabilities": {name: float(value) for name, value in zip(names, probabilities)}}


def _regression(outputs, row, example, top_k, label_names) -> dict:
    return {"score": float(np.reshape(outputs["score"][row], [-1])[0])}


def _embedding(outputs, row, example, top_k, label_names) -> dict:
    return {"embedding": [float(value) for value in outputs["embedding"][row]]}


def _tagging(outputs, row, example, top_k, label_names) -> dict:
    text = example[0]
    pieces = [{"token": _text(token), "tag": _text(tag), "start": int(start), "end": int(end),
               "text": text[int(start):int(end)]}
              for token, tag, start, end in zip(outputs["tokens"][row], outputs["tags"][row], outputs["start"][row],
                                                outputs["end"][row]) if start >= 0]
    return {"tokens": pieces}


def _question_answering(outputs, row, example, top_k, label_names) -> dict:
    answer = {"answer": _text(outputs["answer"][row]), "start": int(outputs["start"][row]),
              "end": int(outputs["end"][row]), "score": float(outputs["score"][row])}
    if "no_answer_score" in outputs:
        answer["no_answer_score"] = float(outputs["no_answer_score"][row])
    return answer


def _tokenize(outputs, row, example, top_k, label_names) -> dict:
    length = int(outputs["lengths"][row])
    return {"token_ids": [int(value) for value in outputs["token_ids"][row, :length]]}


def _preprocess(outputs, row, example, top_k, label_names) -> dict:
    """The packed ids, without the padding."""
    length = int(np.sum(outputs["input_mask"][row]))
    return {name: [int(value) for value in outputs[name][row, :length]] for name in ("input_word_ids", "input_type_ids")}


_DECODERS = {"fill_mask": _fill_mask, "multiple_choice": _multiple_choice, "classification": _classification,
             "regression": _regression, "embedding": _embedding, "tagging": _tagging,
             "question_answering": _question_answering, "tokenize": _tokenize, "preprocess": _preprocess}
