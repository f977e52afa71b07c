"""`SavedModelClient` and `python -m tfbert.export.client` against servers that speak TF Serving's
protocols (`serving_stub`: the real PredictionService protos on a gRPC server, the REST API on
http.server): metadata, every task's signature in batches, non-ASCII text, and errors as one line."""

import json
import socket
import urllib.error
import urllib.request

import grpc
import numpy as np
import pytest
from conftest import CHOICES, CONTEXTS, MASKED, PAIRS, QUESTIONS, TEXTS
from serving_stub import ServingStub, _decimal
from tensorflow_serving.apis import get_model_metadata_pb2, prediction_service_pb2_grpc

from tfbert.export.client import SavedModelClient, main
from tfbert.export.signatures import (GrpcServer, LoadedSavedModel, RestServer, call_grpc, grpc_predict_request,
                                      local_signatures)

EXAMPLES = {
    "classification": list(zip(TEXTS, PAIRS)),
    "regression": TEXTS,
    "tagging": TEXTS,
    "question_answering": list(zip(QUESTIONS, CONTEXTS)),
    "multiple_choice": list(zip(CONTEXTS, CHOICES)),
    "embedding": TEXTS,
    "fill_mask": [text for text in MASKED if "[MASK]" in text],
}
PROTOCOLS = ("grpc", "instances", "inputs")


@pytest.fixture(scope="module")
def stub(exports, loaded):
    server = ServingStub(exports, loaded)
    yield server
    server.close()


def server_for(stub, protocol: str, model: str, **options):
    if protocol == "grpc":
        return GrpcServer(model, stub.grpc_address, **options)
    return RestServer(model, stub.rest_address, protocol, **options)


def test_metadata_gives_the_saved_models_signatures(stub, loaded):
    for task, model in loaded.items():
        local = local_signatures(model)
        for protocol in ("grpc", "instances"):
            served = server_for(stub, protocol, task).signatures()
            assert served.keys() == local.keys(), (task, protocol)
            for name, signature in served.items():
                assert signature.output_shapes == local[name].output_shapes, (task, name, protocol)
                assert signature.input_dtypes.keys() == local[name].input_dtypes.keys()


def local_records(loaded, task: str, examples, signature: str | None = None) -> list[dict]:
    """The records of the export the stub serves, run here (`test_client` checks that a folder source gives
    these, with label names)."""
    return SavedModelClient(LoadedSavedModel(loaded[task]), signature)(examples, batch_size=3)


@pytest.mark.parametrize("task", sorted(EXAMPLES))
def test_every_task_gives_the_local_records_over_grpc_and_rest(task, stub, loaded):
    local = local_records(loaded, task, EXAMPLES[task])
    for protocol in PROTOCOLS:
        client = SavedModelClient(server_for(stub, protocol, task))
        assert client.task == task
        assert client(EXAMPLES[task], batch_size=3) == local, protocol   # requests of 3 examples, then 1


def test_other_signatures_and_versions_over_both_protocols(stub, exports, loaded):
    local = local_records(loaded, "tagging", TEXTS, "tokenize")
    assert any("東京" in str(record) for record in local)
    version = int(exports["tagging"].name)
    for protocol in PROTOCOLS:
        served = SavedModelClient(server_for(stub, protocol, "tagging", version=version), "tokenize")
        assert served(TEXTS, batch_size=3) == local, protocol


def test_client_command_prints_the_local_records_over_both_protocols(stub, loaded, capsys):
    local = local_records(loaded, "question_answering", EXAMPLES["question_answering"][:2])
    inputs = [f"{name}={value}" for pair in EXAMPLES["question_answering"][:2]
              for name, value in zip(("question", "context"), pair)]
    for protocol in PROTOCOLS:
        assert main(["--model", "question_answering", "--format", protocol, "--grpc-address", stub.grpc_address,
                     "--rest-address", stub.rest_address, *[f"--input={item}" for item in inputs]]) == 0
        printed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
        assert printed == json.loads(json.dumps(local)), protocol


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_server_errors_are_one_line(stub, capsys):
    down = f"127.0.0.1:{_closed_port()}"
    cases = [
        (["--model", "nope"], ("answered NOT_FOUND: Servable not found for request: Latest(nope); give the model "
                               "name the server was started with"), "answered 404: Servable not found"),
        (["--model", "embedding", "--version", "7"], "Servable not found for request: Specific(embedding, 7)",
         "answered 404: Servable not found for request: Specific(embedding, 7)"),
        (["--model", "embedding", "--signature", "nope"], ("has no signature 'nope'; it has encode, preprocess, "
                                                           "serving_default, tokenize"), "has no signature 'nope'"),
        (["--model", "embedding", "--grpc-address", down, "--rest-address", down],
         f"cannot reach TF Serving at {down} (unavailable:", f"cannot reach TF Serving at {down} (connection refused)"),
    ]
    for arguments, grpc_error, rest_error in cases:
        for protocol, expected in (("grpc", grpc_error), ("instances", rest_error)):
            addresses = ["--grpc-address", stub.grpc_address, "--rest-address", stub.rest_address]
            assert main([*addresses, *arguments, "--format", protocol, "hello"]) == 2
            captured = capsys.readouterr()
            assert captured.out == "" and len(captured.err.splitlines()) == 1, captured.err
            assert captured.err.startswith("python -m tfbert.export.client: error: ")
            assert expected in captured.err, (protocol, captured.err)


def _rest(stub, path: str, body: dict | None = None) -> tuple[int, dict]:
    data = None if body is None else json.dumps(body).encode()
    try:
        with urllib.request.urlopen(urllib.request.Request(f"http://{stub.rest_address}{path}", data)) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_stub_answers_with_tf_servings_statuses_and_bodies(stub, exports):
    """What the client relies on, in the form TF Serving's sources give it (see serving_stub)."""
    version = exports["regression"].name
    status, answer = _rest(stub, "/v1/models/regression")
    assert status == 200 and answer["model_version_status"][0]["version"] == version
    assert answer["model_version_status"][0]["state"] == "AVAILABLE"
    status, answer = _rest(stub, f"/v1/models/regression/versions/{version}/metadata")
    assert answer["model_spec"] == {"name": "regression", "signature_name": "", "version": version}
    definitions = answer["metadata"]["signature_def"]["signature_def"]
    assert definitions["serving_default"]["inputs"]["text"]["dtype"] == "DT_STRING"
    assert "__saved_model_init_op" in definitions     # which the client leaves out
    assert _rest(stub, "/v1/models/regression:predict", {"signature_name": "nope", "instances": ["a"]}) == \
        (400, {"error": 'Serving signature name: "nope" not found in signature def'})
    status, answer = _rest(stub, "/v1/models/regression:predict", {"instances": [{"txt": "a"}]})
    assert status == 400 and answer["error"].endswith("keys must be equal to: text")
    status, answer = _rest(stub, "/v1/models/regression:predict", {"inputs": ["a", "b"]})
    assert status == 200 and np.asarray(answer["outputs"]).shape == (2,)   # a lone output (score) comes bare
    request = get_model_metadata_pb2.GetModelMetadataRequest()
    request.model_spec.name = "regression"
    with grpc.insecure_channel(stub.grpc_address) as channel, pytest.raises(grpc.RpcError) as error:
        prediction_service_pb2_grpc.PredictionServiceStub(channel).GetModelMetadata(request)
    assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert error.value.details() == "GetModelMetadataRequest must specify at least one metadata_field"
    with pytest.raises(ConnectionError, match='answered FAILED_PRECONDITION: Serving signature key "nope" not found'):
        call_grpc(grpc_predict_request({"text": ["a"]}, "regression", "nope"), stub.grpc_address)


def test_floats_are_written_in_the_fewest_digits_that_read_back():
    assert [_decimal(float(np.float32(value)), np.dtype(np.float32)) for value in (0.1, 3, 1 / 3, 1e-5)] == \
        ["0.1", "3.0", "0.333333343", "1e-05"]
    assert _decimal(float("nan"), np.dtype(np.float32)) == "NaN"
