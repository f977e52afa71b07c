"""The client's REST (row and columnar JSON) and gRPC requests, turned into tensors the way TF Serving
does, are accepted by the signatures and give the same outputs as direct calls."""

import base64
import json

import numpy as np
import tensorflow as tf
from conftest import CONTEXTS, PAIRS, QUESTIONS, TEXTS

from tfbert.export.signatures import grpc_predict_request, rest_columnar_body, rest_instances_body

INVALID_UTF8 = b"caf\xe9 \xff\xfe"


def _json_value_to_bytes(value) -> bytes:
    """TF Serving's JSON mapping for DT_STRING: a JSON string as UTF-8, `{"b64": ...}` decoded."""
    return base64.b64decode(value["b64"]) if isinstance(value, dict) else value.encode("utf-8")


def rest_body_to_tensors(body: dict) -> dict[str, tf.Tensor]:
    body = json.loads(json.dumps(body))      # what goes over the wire
    if "instances" in body:
        names = body["instances"][0].keys()
        columns = {name: [row[name] for row in body["instances"]] for name in names}
    else:
        columns = body["inputs"]
    return {name: tf.constant(np.array([_json_value_to_bytes(v) for v in values], dtype=object))
            for name, values in columns.items()}


def _same(a: dict, b: dict):
    assert a.keys() == b.keys()
    for name in a:
        np.testing.assert_array_equal(a[name].numpy(), b[name].numpy())


def test_rest_and_grpc_requests_are_accepted(loaded):
    cases = {
        "classification": {"text": TEXTS + [INVALID_UTF8], "text_pair": PAIRS + [""]},
        "question_answering": {"question": QUESTIONS, "context": CONTEXTS},
        "fill_mask": {"text": ["paris is the [MASK] of france.", INVALID_UTF8]},
    }
    for task, inputs in cases.items():
        signature = loaded[task].signatures["serving_default"]
        direct = signature(**{name: tf.constant([v.encode() if isinstance(v, str) else v for v in values])
                              for name, values in inputs.items()})
        for body in (rest_instances_body(inputs), rest_columnar_body(inputs)):
            assert body["signature_name"] == "serving_default"
            _same(signature(**rest_body_to_tensors(body)), direct)
        request = grpc_predict_request(inputs, task)
        request = type(request).FromString(request.SerializeToString())      # over the wire
        assert request.model_spec.name == task
        tensors = {name: tf.constant(tf.make_ndarray(proto)) for name, proto in request.inputs.items()}
        _same(signature(**tensors), direct)


def test_invalid_utf8_goes_as_b64():
    body = rest_instances_body({"text": [INVALID_UTF8, "ok"]}, signature_name="tokenize")
    assert body["instances"][0]["text"] == {"b64": base64.b64encode(INVALID_UTF8).decode()}
    assert body["instances"][1] == {"text": "ok"} and body["signature_name"] == "tokenize"
