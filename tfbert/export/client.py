"""Call a tfbert model on TensorFlow Serving: REST (row and columnar JSON) and gRPC requests.

    docker run -p 8501:8501 -p 8500:8500 -v $PWD/saved_models/sst2:/models/sst2 -e MODEL_NAME=sst2 tensorflow/serving:2.21.0
    python -m tfbert.export.client --model sst2 "a gripping film" "a dull film"
    python -m tfbert.export.client --model sst2 --format inputs "a gripping film"
    python -m tfbert.export.client --model sst2 --format grpc "a gripping film"      # needs tensorflow-serving-api
    python -m tfbert.export.client --model squad --input question="Who wrote it?" --input context="Ada wrote it."

REST bodies follow TF Serving's API: `{"signature_name": ..., "instances": [{"text": ...}, ...]}`
(row format, one object per example) or `{"signature_name": ..., "inputs": {"text": [...]}}`
(columnar format). Strings that are not valid UTF-8 go as `{"b64": ...}`, which TF Serving decodes.

Example:
    >>> rest_instances_body({"text": ["hello"]})
    {'signature_name': 'serving_default', 'instances': [{'text': 'hello'}]}
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
import urllib.error
import urllib.request
from typing import Mapping, Sequence

StringColumns = Mapping[str, Sequence[str | bytes]]


def _json_string(value: str | bytes):
    """A JSON string, or TF Serving's `{"b64": ...}` for bytes that are not valid UTF-8."""
    if isinstance(value, str):
        return value
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        return {"b64": base64.b64encode(value).decode("ascii")}


def _check_columns(inputs: StringColumns) -> int:
    sizes = {name: len(values) for name, values in inputs.items()}
    if len(set(sizes.values())) != 1:
        raise ValueError(f"every input needs the same number of examples; got {sizes}")
    return next(iter(sizes.values()))


def rest_instances_body(inputs: StringColumns, signature_name: str = "serving_default") -> dict:
    """TF Serving's REST row format: one `{input name: value}` object per example."""
    rows = _check_columns(inputs)
    instances = [{name: _json_string(values[row]) for name, values in inputs.items()} for row in range(rows)]
    return {"signature_name": signature_name, "instances": instances}


def rest_columnar_body(inputs: StringColumns, signature_name: str = "serving_default") -> dict:
    """TF Serving's REST columnar format: `{"inputs": {input name: [values]}}`."""
    _check_columns(inputs)
    return {"signature_name": signature_name,
            "inputs": {name: [_json_string(value) for value in values] for name, values in inputs.items()}}


def grpc_predict_request(inputs: StringColumns, model_name: str, signature_name: str = "serving_default"):
    """A `tensorflow_serving.apis.predict_pb2.PredictRequest` with one string tensor `[batch]` per input."""
    import numpy as np
    import tensorflow as tf
    from tensorflow_serving.apis import predict_pb2

    _check_columns(inputs)
    request = predict_pb2.PredictRequest()
    request.model_spec.name = model_name
    request.model_spec.signature_name = signature_name
    for name, values in inputs.items():
        encoded = [value.encode("utf-8") if isinstance(value, str) else bytes(value) for value in values]
        request.inputs[name].CopyFrom(tf.make_tensor_proto(np.array(encoded, dtype=object)))
    return request


def post_rest(body: dict, model_name: str, address: str = "localhost:8501", timeout: float = 30.0) -> dict:
    """POSTs `body` to `http://address/v1/models/MODEL:predict` and returns the decoded JSON answer.

    `address` is `host:port` or `http://host:port`. Raises ConnectionError with one line: `cannot reach TF
    Serving at HOST:PORT (REASON)`, or the server's own error text (e.g. "Servable not found ...").
    """
    address = address.removeprefix("http://").rstrip("/")
    request = urllib.request.Request(f"http://{address}/v1/models/{model_name}:predict",
                                     data=json.dumps(body).encode("utf-8"),
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as error:
        text = error.read().decode("utf-8", "replace")
        try:
            text = json.loads(text).get("error", text)
        except ValueError:
            pass
        raise ConnectionError(f"TF Serving at {address} answered {error.code}: {text}") from None
    except urllib.error.URLError as error:
        reason = getattr(error.reason, "strerror", None) or str(error.reason)
        raise ConnectionError(f"cannot reach TF Serving at {address} ({reason.lower()})") from None


def grpc_failure(error, address: str) -> ConnectionError:
    """A gRPC error as one line: `cannot reach TF Serving at HOST:PORT (unavailable)`, or the server's own text."""
    import grpc

    code = error.code() if callable(getattr(error, "code", None)) else None
    details = (error.details() if callable(getattr(error, "details", None)) else None) or str(code)
    details = " ".join(details.split())
    if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
        return ConnectionError(f"cannot reach TF Serving at {address} ({code.name.lower().replace('_', ' ')}: "
                               f"{details})")
    return ConnectionError(f"TF Serving at {address} answered {code.name if code else 'an error'}: {details}")


def call_grpc(request, address: str = "localhost:8500", timeout: float = 30.0) -> dict:
    """Sends a `PredictRequest` to TF Serving's gRPC port; returns `{output name: numpy array}`.

    `address` is `host:port` or `grpc://host:port`. Raises ConnectionError with one line (`grpc_failure`).
    """
    import grpc
    import tensorflow as tf
    from tensorflow_serving.apis import prediction_service_pb2_grpc

    address = address.removeprefix("grpc://").rstrip("/")
    try:
        with grpc.insecure_channel(address) as channel:
            response = prediction_service_pb2_grpc.PredictionServiceStub(channel).Predict(request, timeout)
    except grpc.RpcError as error:
        raise grpc_failure(error, address) from None
    return {name: tf.make_ndarray(proto) for name, proto in response.outputs.items()}


def _parse_inputs(args: argparse.Namespace) -> dict[str, list[str]]:
    inputs: dict[str, list[str]] = {}
    if args.texts:
        inputs["text"] = list(args.texts)
    for item in args.input or []:
        name, separator, value = item.partition("=")
        if not separator:
            raise SystemExit(f"--input {item!r}: expected NAME=VALUE")
        inputs.setdefault(name, []).append(value)
    if not inputs:
        raise SystemExit("give texts, or --input NAME=VALUE (repeatable)")
    return inputs


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tfbert.export.client", description=__doc__.split("\n")[0])
    parser.add_argument("texts", nargs="*", help="values of the `text` input, one per example")
    parser.add_argument("--input", action="append", help="NAME=VALUE for other inputs (text_pair, question, context)")
    parser.add_argument("--model", required=True, help="MODEL_NAME the server was started with")
    parser.add_argument("--signature", default="serving_default")
    parser.add_argument("--format", choices=["instances", "inputs", "grpc"], default="instances",
                        help="REST row format, REST columnar format, or gRPC")
    parser.add_argument("--rest-address", default="localhost:8501")
    parser.add_argument("--grpc-address", default="localhost:8500")
    args = parser.parse_args(argv)
    inputs = _parse_inputs(args)
    try:
        if args.format == "grpc":
            outputs = call_grpc(grpc_predict_request(inputs, args.model, args.signature), args.grpc_address)
            answer = {name: value.tolist() for name, value in outputs.items()}
            print(json.dumps(answer, indent=2, default=lambda v: v.decode("utf-8", "replace")))
            return 0
        body = (rest_instances_body if args.format == "instances" else rest_columnar_body)(inputs, args.signature)
        answer = post_rest(body, args.model, args.rest_address)
    except ConnectionError as error:
        print(f"{parser.prog}: error: {error}", file=sys.stderr)
        return 2
    print(json.dumps(answer, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
