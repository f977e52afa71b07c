"""A stand-in for TF Serving in the tests: a real gRPC server (the `tensorflow_serving.apis`
PredictionService: Predict and GetModelMetadata) and a REST server (`/v1/models/...`) on localhost,
answering from local SavedModels the way the model server does. There is no model server binary here
(it is a C++ program); what this copies from its sources (tensorflow/serving, July 2026):

- servables are looked up as `Latest(NAME)` / `Specific(NAME, N)`; a missing one is NOT_FOUND
  `Servable not found for request: ...` (core/basic_manager.cc); REST maps status codes to HTTP as
  model_servers/http_server.cc does (NOT_FOUND 404, INVALID_ARGUMENT and FAILED_PRECONDITION 400) and
  answers `{"error": MESSAGE}` (util/json_tensor.cc `MakeJsonFromStatus`);
- GetModelMetadata needs `metadata_field: "signature_def"` and packs the MetaGraph's SignatureDefs as a
  `SignatureDefMap` in an Any (servables/tensorflow/get_model_metadata_impl.cc); REST's `/metadata` is
  that map as proto JSON with proto field names and default values printed (http_rest_api_util.cc);
- Predict with an unknown signature is FAILED_PRECONDITION `Serving signature key "X" not found.`
  over gRPC (predict_util.cc) and INVALID_ARGUMENT `Serving signature name: "X" not found in signature
  def` over REST (http_rest_api_handler.cc `GetInfoMap`); a request with other inputs than the
  signature's is INVALID_ARGUMENT `input size does not match signature: ...`;
- REST bodies are parsed and answered as util/json_tensor.cc does: `instances` (a plain list for one
  input, else one object per example with exactly the input names) or `inputs`; strings as JSON
  strings or `{"b64": ...}`; answers `predictions` (rows; bare values for a lone output) or `outputs`
  (columns; bare for a lone output); strings written as they are (not checked for UTF-8) unless the
  output name ends in `_bytes`; floats in the shortest `%g` form that reads back as the same float32.

Example:
    >>> stub = ServingStub({"sst2": "saved_models/sst2/1"})  # doctest: +SKIP
    >>> stub.grpc_address, stub.rest_address  # doctest: +SKIP
    ('127.0.0.1:40123', '127.0.0.1:40124')
    >>> stub.close()  # doctest: +SKIP
"""

from __future__ import annotations

import base64
import http.server
import json
import math
import re
import threading
from concurrent import futures
from pathlib import Path

import grpc
import numpy as np
import tensorflow as tf
from google.protobuf.json_format import MessageToDict
from tensorflow.core.protobuf import saved_model_pb2
from tensorflow_serving.apis import (get_model_metadata_pb2, get_model_status_pb2, predict_pb2,
                                     prediction_service_pb2_grpc)

# The REST paths TF Serving serves (model_servers/http_rest_api_util.cc), case-insensitive.
PREDICT_PATH = re.compile(r"(?i)/v1/models/([^/:]+)(?:(?:/versions/(\d+))|(?:/labels/([^/:]+)))?:"
                          r"(classify|regress|predict)")
MODEL_PATH = re.compile(r"(?i)/v1/models(?:/([^/:]+))?(?:(?:/versions/(\d+))|(?:/labels/([^/:]+)))?(?:/(metadata))?")
HTTP_STATUS = {grpc.StatusCode.NOT_FOUND: 404, grpc.StatusCode.INVALID_ARGUMENT: 400,
               grpc.StatusCode.FAILED_PRECONDITION: 400, grpc.StatusCode.UNIMPLEMENTED: 501}
DEFAULT_SIGNATURE = "serving_default"


class ServingError(Exception):
    """A status TF Serving answers with: a gRPC code and its message."""

    def __init__(self, code: grpc.StatusCode, message: str):
        super().__init__(message)
        self.code, self.message = code, message


class Servable:
    """One model version: its SignatureDefs (read from saved_model.pb, as the server does) and the loaded
    SavedModel that runs them."""

    def __init__(self, name: str, folder: str | Path, loaded=None):
        self.name, self.folder = name, Path(folder)
        self.version = int(self.folder.name) if self.folder.name.isdigit() else 1
        saved_model = saved_model_pb2.SavedModel.FromString((self.folder / "saved_model.pb").read_bytes())
        self.signature_defs = saved_model.meta_graphs[0].signature_def
        self.loaded = loaded if loaded is not None else tf.saved_model.load(str(self.folder))

    def signature_def_map(self) -> get_model_metadata_pb2.SignatureDefMap:
        definitions = get_model_metadata_pb2.SignatureDefMap()
        for key, value in self.signature_defs.items():
            definitions.signature_def[key].CopyFrom(value)
        return definitions

    def run(self, signature_name: str, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        definition = self.signature_defs[signature_name]
        expected, sent = set(definition.inputs), set(inputs)
        if sent != expected:
            raise ServingError(grpc.StatusCode.INVALID_ARGUMENT, (
                f"input size does not match signature: {len(sent)}!={len(expected)} len({{{','.join(sorted(sent))}}}) "
                f"!= len({{{','.join(sorted(expected))}}}). Sent extra: {{{','.join(sorted(sent - expected))}}}. "
                f"Missing but required: {{{','.join(sorted(expected - sent))}}}."))
        try:
            outputs = self.loaded.signatures[signature_name](**{name: tf.constant(value)
                                                                 for name, value in inputs.items()})
        except tf.errors.OpError as error:
            raise ServingError(_grpc_code(error.error_code), error.message) from None
        except (TypeError, ValueError) as error:
            raise ServingError(grpc.StatusCode.INVALID_ARGUMENT, str(error)) from None
        return {name: value.numpy() for name, value in outputs.items()}


def _grpc_code(tf_code: int) -> grpc.StatusCode:
    """TensorFlow's error code as a `grpc.StatusCode` (the two share numbers)."""
    return next((code for code in grpc.StatusCode if code.value[0] == tf_code), grpc.StatusCode.UNKNOWN)


class ServingStub:
    """`{model name: version folder}` served over gRPC and REST on 127.0.0.1 (free ports); `loaded`
    gives SavedModels already loaded, by model name. `close()` stops both servers."""

    def __init__(self, folders: dict[str, str | Path], loaded: dict | None = None):
        loaded = loaded or {}
        self.servables = {name: Servable(name, folder, loaded.get(name)) for name, folder in folders.items()}
        self.grpc_server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
        prediction_service_pb2_grpc.add_PredictionServiceServicer_to_server(_PredictionService(self),
                                                                           self.grpc_server)
        self.grpc_address = f"127.0.0.1:{self.grpc_server.add_insecure_port('127.0.0.1:0')}"
        self.grpc_server.start()
        self.rest_server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _rest_handler(self))
        self.rest_address = f"127.0.0.1:{self.rest_server.server_address[1]}"
        threading.Thread(target=self.rest_server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.grpc_server.stop(None)
        self.rest_server.shutdown()
        self.rest_server.server_close()

    def servable(self, name: str, version: int | None = None) -> Servable:
        found = self.servables.get(name)
        if found is None or (version is not None and version != found.version):
            request = f"Latest({name})" if version is None else f"Specific({name}, {version})"
            raise ServingError(grpc.StatusCode.NOT_FOUND, f"Servable not found for request: {request}")
        return found

    def metadata(self, request: get_model_metadata_pb2.GetModelMetadataRequest):
        if not request.HasField("model_spec"):
            raise ServingError(grpc.StatusCode.INVALID_ARGUMENT, "Missing ModelSpec")
        if not request.metadata_field:
            raise ServingError(grpc.StatusCode.INVALID_ARGUMENT,
                               "GetModelMetadataRequest must specify at least one metadata_field")
        for field in request.metadata_field:
            if field != "signature_def":
                raise ServingError(grpc.StatusCode.INVALID_ARGUMENT, f"Metadata field {field} is not supported")
        servable = self.servable(request.model_spec.name, _version(request.model_spec))
        response = get_model_metadata_pb2.GetModelMetadataResponse()
        response.model_spec.name = servable.name
        response.model_spec.version.value = servable.version
        response.metadata["signature_def"].Pack(servable.signature_def_map())
        return response

    def predict(self, request: predict_pb2.PredictRequest) -> predict_pb2.PredictResponse:
        if not request.HasField("model_spec"):
            raise ServingError(grpc.StatusCode.INVALID_ARGUMENT, "Missing ModelSpec")
        servable = self.servable(request.model_spec.name, _version(request.model_spec))
        signature = request.model_spec.signature_name or DEFAULT_SIGNATURE
        if signature not in servable.signature_defs:
            raise ServingError(grpc.StatusCode.FAILED_PRECONDITION, f'Serving signature key "{signature}" not found.')
        outputs = servable.run(signature, {name: tf.make_ndarray(proto) for name, proto in request.inputs.items()})
        response = predict_pb2.PredictResponse()
        response.model_spec.name = servable.name
        response.model_spec.version.value = servable.version
        response.model_spec.signature_name = signature
        for name, value in outputs.items():
            response.outputs[name].CopyFrom(tf.make_tensor_proto(value))
        return response


def _version(model_spec) -> int | None:
    return model_spec.version.value if model_spec.HasField("version") else None


class _PredictionService(prediction_service_pb2_grpc.PredictionServiceServicer):
    def __init__(self, stub: ServingStub):
        self.stub = stub

    def Predict(self, request, context):
        return self._answer(self.stub.predict, request, context)

    def GetModelMetadata(self, request, context):
        return self._answer(self.stub.metadata, request, context)

    @staticmethod
    def _answer(method, request, context):
        try:
            return method(request)
        except ServingError as error:
            context.abort(error.code, error.message)


# ---- REST ----

def _rest_handler(stub: ServingStub):
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self._answer(lambda: _rest_get(stub, self.path))

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self._answer(lambda: _rest_post(stub, self.path, body))

        def _answer(self, compute):
            try:
                status, data = 200, compute()
            except ServingError as error:
                status = HTTP_STATUS.get(error.code, 500)
                data = json.dumps({"error": error.message}, indent=4).encode("utf-8")
            except LookupError:        # a path TF Serving's handler does not take
                status, data = 404, b""
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    return Handler


def _rest_get(stub: ServingStub, path: str) -> bytes:
    match = MODEL_PATH.fullmatch(path)
    if match is None:
        raise LookupError(path)
    name, version, _, metadata = match.groups()
    if not name:
        raise ServingError(grpc.StatusCode.INVALID_ARGUMENT, "Missing model name in request.")
    options = {"preserving_proto_field_name": True, "always_print_fields_with_no_presence": True}
    if metadata:
        request = get_model_metadata_pb2.GetModelMetadataRequest(metadata_field=["signature_def"])
        request.model_spec.name = name
        if version is not None:
            request.model_spec.version.value = int(version)
        response = stub.metadata(request)
        definitions = get_model_metadata_pb2.SignatureDefMap()
        response.metadata["signature_def"].Unpack(definitions)
        answer = {"model_spec": MessageToDict(response.model_spec, **options),
                  "metadata": {"signature_def": MessageToDict(definitions, **options)}}
    else:
        servable = stub.servable(name, None if version is None else int(version))
        status = get_model_status_pb2.GetModelStatusResponse()
        entry = status.model_version_status.add(version=servable.version)
        entry.state = get_model_status_pb2.ModelVersionStatus.AVAILABLE
        answer = MessageToDict(status, **options)
    return json.dumps(answer, indent=1).encode("utf-8")


def _rest_post(stub: ServingStub, path: str, raw: bytes) -> bytes:
    match = PREDICT_PATH.fullmatch(path)
    if match is None:
        raise LookupError(path)
    name, version, _, method = match.groups()
    if method != "predict":
        raise ServingError(grpc.StatusCode.UNIMPLEMENTED, f"{method} is not served by this stand-in")
    servable = stub.servable(name, None if version is None else int(version))
    try:
        body = json.loads(raw)
    except ValueError as error:
        raise ServingError(grpc.StatusCode.INVALID_ARGUMENT, f"JSON Parse error: {error}") from None
    if not isinstance(body, dict):
        raise ServingError(grpc.StatusCode.INVALID_ARGUMENT, f"JSON Value: {raw.decode('utf-8', 'replace')} "
                                                             "Is not object")
    signature = body.get("signature_name", "") or DEFAULT_SIGNATURE
    if signature not in servable.signature_defs:
        raise ServingError(grpc.StatusCode.INVALID_ARGUMENT,
                           f'Serving signature name: "{signature}" not found in signature def')
    outputs = servable.run(signature, rest_request_columns(body, servable.signature_defs[signature].inputs))
    return (_rows_json(outputs) if "instances" in body else _columns_json(outputs)).encode("utf-8", "surrogateescape")


def rest_request_columns(body: dict, inputs) -> dict[str, np.ndarray]:
    """A decoded `:predict` body as one array per input, as TF Serving reads it for a signature's
    `inputs` (`{name: TensorInfo}`): `instances` (rows) or `inputs` (columns)."""
    if ("instances" in body) == ("inputs" in body):
        raise ServingError(grpc.StatusCode.INVALID_ARGUMENT, "Missing 'inputs' or 'instances' key" if
                           "instances" not in body else "Not formatted correctly expecting only one of 'inputs' "
                                                        "or 'instances' keys to exist ")
    return _instances(body["instances"], inputs) if "instances" in body else _inputs(body["inputs"], inputs)


def _is_b64(value) -> bool:
    return isinstance(value, dict) and set(value) == {"b64"}


def _instances(instances, inputs) -> dict[str, np.ndarray]:
    if not isinstance(instances, list):
        raise ServingError(grpc.StatusCode.INVALID_ARGUMENT, "Expecting 'instances' to be an list/array")
    if not instances:
        raise ServingError(grpc.StatusCode.INVALID_ARGUMENT, "No values in 'instances' array")
    named = isinstance(instances[0], dict) and not _is_b64(instances[0])
    if not named and len(inputs) > 1:
        raise ServingError(grpc.StatusCode.INVALID_ARGUMENT, "instances is a plain list, but expecting list of "
                                                             "objects as multiple input tensors required as per "
                                                             "tensorinfo_map")
    if not named:
        (name,) = inputs
        return {name: _tensor(instances, inputs[name].dtype)}
    for number, instance in enumerate(instances):
        if not isinstance(instance, dict) or set(instance) != set(inputs):
            raise ServingError(grpc.StatusCode.INVALID_ARGUMENT, (
                f"Failed to process element: {number} of 'instances' list. JSON object: {json.dumps(instance)} "
                f"keys must be equal to: {','.join(sorted(inputs))}"))
    return {name: _tensor([instance[name] for instance in instances], info.dtype) for name, info in inputs.items()}


def _inputs(columns, inputs) -> dict[str, np.ndarray]:
    if not isinstance(columns, dict) or _is_b64(columns):
        if len(inputs) > 1:
            raise ServingError(grpc.StatusCode.INVALID_ARGUMENT, "inputs is a plain value/list, but expecting an "
                                                                 "object as multiple input tensors required as per "
                                                                 "tensorinfo_map")
        (name,) = inputs
        return {name: _tensor(columns, inputs[name].dtype)}
    for name in inputs:
        if name not in columns:
            raise ServingError(grpc.StatusCode.INVALID_ARGUMENT, f"Missing named input: {name} in 'inputs' object.")
    return {name: _tensor(columns[name], info.dtype) for name, info in inputs.items()}


def _tensor(values, dtype_enum: int) -> np.ndarray:
    """JSON values as a tensor of the signature's dtype: strings from JSON strings or `{"b64": ...}`."""
    dtype = tf.dtypes.as_dtype(dtype_enum)

    def leaf(value):
        if isinstance(value, list):
            return [leaf(item) for item in value]
        if dtype == tf.string:
            if _is_b64(value):
                return base64.b64decode(value["b64"])
            if isinstance(value, str):
                return value.encode("utf-8")
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            return value
        raise ServingError(grpc.StatusCode.INVALID_ARGUMENT, f"JSON Value: {json.dumps(value)} is not of expected "
                                                             f"type: {dtype.name}")
    try:
        array = np.array(leaf(values), dtype=object if dtype == tf.string else dtype.as_numpy_dtype)
    except ValueError:
        array = None
    if array is None or (array.dtype == object and any(isinstance(item, list) for item in array.flat)):
        raise ServingError(grpc.StatusCode.INVALID_ARGUMENT, "Encountered list at unexpected size")
    return array


def _rows_json(outputs: dict[str, np.ndarray]) -> str:
    sizes = {len(value) if value.ndim else None for value in outputs.values()}
    if None in sizes or len(sizes) != 1:
        raise ServingError(grpc.StatusCode.INVALID_ARGUMENT, f"outputs have inconsistent batch sizes: {sizes}")
    rows = []
    for row in range(sizes.pop()):
        values = {name: _json(name, value[row]) for name, value in outputs.items()}
        rows.append(next(iter(values.values())) if len(values) == 1 else _object(values))
    return '{"predictions": [' + ", ".join(rows) + "]}"


def _columns_json(outputs: dict[str, np.ndarray]) -> str:
    values = {name: _json(name, value) for name, value in outputs.items()}
    return '{"outputs": ' + (next(iter(values.values())) if len(values) == 1 else _object(values)) + "}"


def _object(values: dict[str, str]) -> str:
    return "{" + ", ".join(f"{json.dumps(name)}: {value}" for name, value in values.items()) + "}"


def _json(name: str, value) -> str:
    """A tensor's JSON text as TF Serving writes it (json_tensor.cc `AddSingleValueAndAdvance`)."""
    value = np.asarray(value)
    if value.ndim:
        return "[" + ", ".join(_json(name, item) for item in value) + "]"
    item = value.item()
    if isinstance(item, bytes):
        if name.endswith("_bytes"):
            return json.dumps({"b64": base64.b64encode(item).decode("ascii")})
        # the bytes as they are (TF Serving does not check them for UTF-8); encoded back on the way out
        return json.dumps(item.decode("utf-8", "surrogateescape"), ensure_ascii=False)
    if isinstance(item, bool):
        return "true" if item else "false"
    if isinstance(item, float):
        return _decimal(item, value.dtype)
    return str(item)


def _decimal(number: float, dtype: np.dtype) -> str:
    """json_tensor.cc `WriteDecimal`: `%g`, or all the digits the type needs where `%g` does not read
    back as the same number; `.0` on whole numbers; NaN and Infinity bare."""
    if math.isnan(number):
        return "NaN"
    if math.isinf(number):
        return "-Infinity" if number < 0 else "Infinity"
    text = f"{number:g}"
    if dtype.type(text) != dtype.type(number):
        text = f"{number:.{9 if dtype == np.float32 else 17}g}"
    return text if "." in text or "e" in text else text + ".0"
