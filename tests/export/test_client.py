"""The client's REST (row and columnar JSON) and gRPC requests, turned into tensors the way TF Serving
does, are accepted by the signatures and give the same outputs as direct calls; `SavedModelClient` on
`serving_stub`'s REST server gives the records it gives on the export folder (test_serving_protocol
covers both protocols and every task)."""

import base64
import json

import numpy as np
import pytest
import tensorflow as tf
from conftest import CONTEXTS, PAIRS, QUESTIONS, TEXTS
from serving_stub import Servable, ServingStub, rest_request_columns

from tfbert.export.signatures import grpc_predict_request, rest_columnar_body, rest_instances_body

pytestmark = pytest.mark.end_to_end

INVALID_UTF8 = b"caf\xe9 \xff\xfe"


def rest_body_to_tensors(body: dict, inputs) -> dict[str, tf.Tensor]:
    """The tensors TF Serving makes of a REST body for a signature's `inputs` (`serving_stub`)."""
    body = json.loads(json.dumps(body))      # what goes over the wire
    return {name: tf.constant(value) for name, value in rest_request_columns(body, inputs).items()}


def _same(a: dict, b: dict):
    assert a.keys() == b.keys()
    for name in a:
        np.testing.assert_array_equal(a[name].numpy(), b[name].numpy())


def test_rest_and_grpc_requests_are_accepted(exports, loaded):
    cases = {
        "classification": {"text": TEXTS + [INVALID_UTF8], "text_pair": PAIRS + [""]},
        "question_answering": {"question": QUESTIONS, "context": CONTEXTS},
        "fill_mask": {"text": ["paris is the [MASK] of france.", INVALID_UTF8]},
    }
    for task, inputs in cases.items():
        signature = loaded[task].signatures["serving_default"]
        input_infos = Servable(task, exports[task], loaded[task]).signature_defs["serving_default"].inputs
        direct = signature(**{name: tf.constant([v.encode() if isinstance(v, str) else v for v in values])
                              for name, values in inputs.items()})
        for body in (rest_instances_body(inputs), rest_columnar_body(inputs)):
            assert body["signature_name"] == "serving_default"
            _same(signature(**rest_body_to_tensors(body, input_infos)), direct)
        request = grpc_predict_request(inputs, task)
        request = type(request).FromString(request.SerializeToString())      # over the wire
        assert request.model_spec.name == task
        tensors = {name: tf.constant(tf.make_ndarray(proto)) for name, proto in request.inputs.items()}
        _same(signature(**tensors), direct)


def test_invalid_utf8_goes_as_b64():
    body = rest_instances_body({"text": [INVALID_UTF8, "ok"]}, signature_name="tokenize")
    assert body["instances"][0]["text"] == {"b64": base64.b64encode(INVALID_UTF8).decode()}
    assert body["instances"][1] == {"text": "ok"} and body["signature_name"] == "tokenize"


def test_client_on_a_rest_server_gives_the_local_exports_records(exports, loaded):
    from tfbert.export.client import SavedModelClient
    from tfbert.export.signatures import RestServer

    stub = ServingStub({task: exports[task] for task in ("classification", "fill_mask")}, loaded)
    try:
        for task, texts in (("classification", [f"{a}\t{b}" for a, b in zip(TEXTS, PAIRS)]),
                            ("fill_mask", ["paris is the [MASK] of france."])):
            local = SavedModelClient(exports[task])(texts)
            if task == "classification":   # a server sends no label names: probabilities by label id
                for record in local:
                    record["probabilities"] = {str(index): value
                                               for index, value in enumerate(record["probabilities"].values())}
            for body_format in ("instances", "inputs"):
                served = SavedModelClient(RestServer(task, stub.rest_address, body_format))(texts)
                assert served == local, body_format
    finally:
        stub.close()


def test_exported_embedder_runs_through_the_client_locally_and_on_a_server(exports, loaded):
    from tfbert.export.signatures import RestServer
    from tfbert.inference.text_models import SavedModelEmbedder

    local = SavedModelEmbedder(exports["embedding"], batch_size=2).embed(TEXTS)
    direct = loaded["embedding"].signatures["serving_default"](text=tf.constant(TEXTS))["embedding"].numpy()
    np.testing.assert_allclose(local, direct, atol=1e-5)   # batches of 2 and of all
    stub = ServingStub({task: exports[task] for task in ("embedding", "classification")}, loaded)
    try:
        served = SavedModelEmbedder(RestServer("embedding", stub.rest_address)).embed(TEXTS)
        np.testing.assert_allclose(served, local, atol=1e-5)
        with pytest.raises(ValueError, match="serving_default returns label, label_id, logits, probabilities, not "
                                             "'embedding'"):
            SavedModelEmbedder(RestServer("classification", stub.rest_address)).embed(TEXTS)
    finally:
        stub.close()
