"""Where a `SavedModelClient` sends its strings: a signature of a loaded SavedModel, or TF Serving over
REST (row or columnar JSON) or gRPC. Each is a `Signature`: its input dtypes, its output names, and a
call from `{input name: strings}` to `{output name: numpy array}`.

REST bodies follow TF Serving's API: `{"signature_name": ..., "instances": [{"text": ...}, ...]}`
(row format, one object per example) or `{"signature_name": ..., "inputs": {"text": [...]}}`
(columnar format). Strings that are not valid UTF-8 go as `{"b64": ...}`, which TF Serving decodes.

Example:
    >>> rest_instances_body({"text": ["hello"]})
    {'signature_name': 'serving_default', 'instances': [{'text': 'hello'}]}
    >>> rest_columnar_body({"text": ["hello"], "text_pair": ["world"]})["inputs"]
    {'text': ['hello'], 'text_pair': ['world']}
"""

from __future__ import annotations

import base64
import dataclasses
import json
import urllib.error
import urllib.request
from typing import Any, Callable, Mapping, Sequence

import numpy as np

StringColumns = Mapping[str, Sequence[Any]]
# The REST bodies a `RestServer` sends: TF Serving's row format or its columnar format.
REST_FORMATS = ("instances", "inputs")
# The SignatureDef TF writes for a SavedModel's initializer; TF Serving lists it with the others, and it
# takes and returns nothing a client can use.
INIT_OP_SIGNATURE = "__saved_model_init_op"


@dataclasses.dataclass(frozen=True)
class Signature:
    """One signature of an export, wherever it runs.

    Attributes:
        name: the signature's name (`serving_default`, `tokenize`, ...).
        input_dtypes: `{input name: dtype name}` (`string`, `int32`, ...).
        output_shapes: `{output name: shape}`, `None` for dimensions not fixed (the batch).
        call: `{input name: values}` (strings as UTF-8 bytes, nested for `[batch, choices]`) to
            `{output name: numpy array}`.
    """

    name: str
    input_dtypes: dict[str, str]
    output_shapes: dict[str, tuple]
    call: Callable[[StringColumns], dict[str, np.ndarray]]

    def describe(self) -> str:
        """`takes text (string) and returns embedding`, the line errors quote."""
        inputs = ", ".join(f"{name} ({dtype})" for name, dtype in sorted(self.input_dtypes.items()))
        return f"takes {inputs or 'nothing'} and returns {', '.join(sorted(self.output_shapes))}"


def local_signatures(loaded) -> dict[str, Signature]:
    """The signatures of a `tf.saved_model.load`ed export."""
    return {name: _local_signature(loaded, name) for name in loaded.signatures}


class LoadedSavedModel:
    """A SavedModel this process has loaded (`tf.saved_model.load`) as a `SavedModelClient` source, run
    without loading it again; `label` names it in errors. (A folder source also reads the export's
    assets.extra: label names and the mask token; this one does not.)

    Example:
        >>> import tensorflow as tf
        >>> from tfbert.export import SavedModelClient
        >>> source = LoadedSavedModel(tf.saved_model.load("saved_models/sst2/1"), "sst2")  # doctest: +SKIP
        >>> SavedModelClient(source)(["a gripping film"])[0]["label"]  # doctest: +SKIP
        'positive'
    """

    def __init__(self, loaded, label: str = "a loaded SavedModel"):
        self.loaded, self.label = loaded, label

    def signatures(self) -> dict[str, Signature]:
        return local_signatures(self.loaded)


def _local_signature(loaded, name: str) -> Signature:
    import tensorflow as tf

    function = loaded.signatures[name]

    def call(columns: StringColumns) -> dict[str, np.ndarray]:
        tensors = {key: tf.constant(values, tf.string) for key, values in columns.items()}
        # through `loaded`, which keeps the signature's variables alive
        return {key: value.numpy() for key, value in loaded.signatures[name](**tensors).items()}

    specs = function.structured_input_signature[1]
    return Signature(name, {key: spec.dtype.name for key, spec in specs.items()},
                     {key: tuple(spec.shape) for key, spec in function.structured_outputs.items()}, call)


def _json_string(value: str | bytes):
    """A JSON string, or TF Serving's `{"b64": ...}` for bytes that are not valid UTF-8."""
    if isinstance(value, str):
        return value
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        return {"b64": base64.b64encode(value).decode("ascii")}


def _json_value(value):
    """Strings as JSON values, keeping the nesting of `[batch, choices]` inputs."""
    return [_json_value(item) for item in value] if isinstance(value, (list, tuple)) else _json_string(value)


def _check_columns(inputs: StringColumns) -> int:
    sizes = {name: len(values) for name, values in inputs.items()}
    if len(set(sizes.values())) != 1:
        raise ValueError(f"every input needs the same number of examples; got {sizes}")
    return next(iter(sizes.values()))


def rest_instances_body(inputs: StringColumns, signature_name: str = "serving_default") -> dict:
    """TF Serving's REST row format: one `{input name: value}` object per example."""
    rows = _check_columns(inputs)
    instances = [{name: _json_value(values[row]) for name, values in inputs.items()} for row in range(rows)]
    return {"signature_name": signature_name, "instances": instances}


def rest_columnar_body(inputs: StringColumns, signature_name: str = "serving_default") -> dict:
    """TF Serving's REST columnar format: `{"inputs": {input name: [values]}}`."""
    _check_columns(inputs)
    return {"signature_name": signature_name,
            "inputs": {name: [_json_value(value) for value in values] for name, values in inputs.items()}}


def grpc_predict_request(inputs: StringColumns, model_name: str, signature_name: str = "serving_default",
                         version: int | None = None):
    """A `tensorflow_serving.apis.predict_pb2.PredictRequest` with one string tensor per input (for
    `version` of the model, else its latest)."""
    import tensorflow as tf
    from tensorflow_serving.apis import predict_pb2

    _check_columns(inputs)
    request = predict_pb2.PredictRequest()
    name_model(request.model_spec, model_name, version)
    request.model_spec.signature_name = signature_name
    for name, values in inputs.items():
        request.inputs[name].CopyFrom(tf.make_tensor_proto(np.array(_utf8(values), dtype=object)))
    return request


def _utf8(values):
    return [_utf8(value) if isinstance(value, (list, tuple)) else
            value.encode("utf-8") if isinstance(value, str) else bytes(value) for value in values]


def name_model(model_spec, model_name: str, version: int | None = None) -> None:
    """Fills a request's `model_spec` (TF Serving's `ModelSpec`): the model, and `version` (else its latest)."""
    model_spec.name = model_name
    if version is not None:
        model_spec.version.value = version


def host_port(address: str, scheme: str) -> str:
    """`HOST:PORT` from an address given as `HOST:PORT` or `SCHEME://HOST:PORT[/]`.

    Example:
        >>> host_port("http://localhost:8501/", "http"), host_port("localhost:8500", "grpc")
        ('localhost:8501', 'localhost:8500')
    """
    return address.removeprefix(f"{scheme}://").rstrip("/")


def _http(url: str, address: str, body: dict | None = None, timeout: float = 30.0) -> dict:
    """GETs (or POSTs `body` as JSON to) `url`; the decoded answer, or ConnectionError with one line:
    `cannot reach TF Serving at HOST:PORT (REASON)`, or the server's own error text.

    TF Serving writes string outputs as they are, not checked for UTF-8: the answer is read with
    `surrogateescape`, so `_output_array` gets the bytes back."""
    data = None if body is None else json.dumps(body).encode("utf-8")
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.loads(response.read().decode("utf-8", "surrogateescape"))
    except urllib.error.HTTPError as error:
        text = error.read().decode("utf-8", "replace")
        try:
            answer = json.loads(text)
            text = answer.get("error", text) if isinstance(answer, dict) else text
        except ValueError:
            pass
        raise server_error(address, str(error.code), text or f"nothing, for {url}") from None
    except urllib.error.URLError as error:
        reason = getattr(error.reason, "strerror", None) or str(error.reason)
        raise ConnectionError(f"cannot reach TF Serving at {address} ({reason.lower()})") from None


def server_error(address: str, status: str, text: str) -> ConnectionError:
    """TF Serving's own error as one line (`TF Serving at HOST:PORT answered STATUS: TEXT`), with what to
    check when it does not serve the model asked for (`Servable not found for request: Latest(NAME)`)."""
    line = f"TF Serving at {address} answered {status}: {' '.join(text.split())}"
    if "Servable not found" in text:
        line += ("; give the model name the server was started with (MODEL_NAME, or --model_name), and a version "
                 "it has loaded")
    return ConnectionError(line)


def rest_model_url(address: str, model_name: str, version: int | None = None) -> str:
    """`http://HOST:PORT/v1/models/NAME`, with `/versions/N` for one version (TF Serving's REST paths).

    Example:
        >>> rest_model_url("localhost:8501", "sst2", version=2)
        'http://localhost:8501/v1/models/sst2/versions/2'
    """
    return f"http://{host_port(address, 'http')}/v1/models/{model_name}" + ("" if version is None else f"/versions/{version}")


def post_rest(body: dict, model_name: str, address: str = "localhost:8501", timeout: float = 30.0,
              version: int | None = None) -> dict:
    """POSTs `body` to `http://address/v1/models/MODEL[/versions/N]:predict` and returns the decoded JSON
    answer.

    `address` is `host:port` or `http://host:port`. Raises ConnectionError with one line (see `_http`).
    """
    return _http(rest_model_url(address, model_name, version) + ":predict",
                 host_port(address, "http"), body, timeout)


def grpc_failure(error, address: str) -> ConnectionError:
    """A gRPC error as one line: `cannot reach TF Serving at HOST:PORT (unavailable)`, or the server's own text."""
    import grpc

    code = error.code() if callable(getattr(error, "code", None)) else None
    details = (error.details() if callable(getattr(error, "details", None)) else None) or str(code)
    details = " ".join(details.split())
    if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
        return ConnectionError(f"cannot reach TF Serving at {address} ({code.name.lower().replace('_', ' ')}: "
                               f"{details})")
    return server_error(address, code.name if code else "an error", details)


def call_grpc(request, address: str = "localhost:8500", timeout: float = 30.0, method: str = "Predict"):
    """Sends `request` to TF Serving's gRPC port (`Predict` or `GetModelMetadata`); returns the response.

    `address` is `host:port` or `grpc://host:port`. Raises ConnectionError with one line (`grpc_failure`).
    """
    import grpc
    from tensorflow_serving.apis import prediction_service_pb2_grpc

    address = host_port(address, "grpc")
    try:
        with grpc.insecure_channel(address) as channel:
            stub = prediction_service_pb2_grpc.PredictionServiceStub(channel)
            return getattr(stub, method)(request, timeout)
    except grpc.RpcError as error:
        raise grpc_failure(error, address) from None


# Numpy types of TF Serving's dtype names where they differ (`DT_FLOAT` is float32).
NUMPY_TYPES = {"float": "float32", "double": "float64", "half": "float16"}


def _output_array(values, dtype: str | None = None) -> np.ndarray:
    """A JSON output as numpy: numbers as the signature's `dtype` (TF Serving writes a float32 in the
    fewest digits that read back as it, so it is read back as float32); strings (and `{"b64": ...}`) as
    bytes in an object array of the same shape."""
    first = values
    while isinstance(first, list) and first:
        first = first[0]
    if isinstance(first, (str, dict)):
        return np.array(_bytes(values), dtype=object)
    try:
        return np.asarray(values, dtype=np.dtype(NUMPY_TYPES.get(dtype, dtype)) if dtype else None)
    except TypeError:      # a dtype numpy does not name (bfloat16, ...)
        return np.asarray(values)


def _bytes(values):
    if isinstance(values, list):
        return [_bytes(value) for value in values]
    if isinstance(values, dict):
        return base64.b64decode(values["b64"])
    return values.encode("utf-8", "surrogateescape")


class RestServer:
    """A model on TF Serving's REST port: its signatures from `/metadata`, calls as row or columnar JSON.

    Example:
        >>> server = RestServer("sst2", "localhost:8501")  # doctest: +SKIP
        >>> sorted(server.signatures()["serving_default"].output_shapes)  # doctest: +SKIP
        ['label', 'label_id', 'logits', 'probabilities']
    """

    def __init__(self, model_name: str, address: str = "localhost:8501", body_format: str = "instances",
                 timeout: float = 30.0, version: int | None = None):
        if body_format not in REST_FORMATS:
            raise ValueError(f"body_format {body_format!r}: use one of {', '.join(REST_FORMATS)}")
        self.model_name, self.body_format, self.timeout, self.version = model_name, body_format, timeout, version
        self.address = host_port(address, "http")

    @property
    def label(self) -> str:
        return f"{self.model_name} at {self.address}"

    def signatures(self) -> dict[str, Signature]:
        answer = _http(rest_model_url(self.address, self.model_name, self.version) + "/metadata", self.address,
                       timeout=self.timeout)
        definitions = answer.get("metadata", {}).get("signature_def", {}).get("signature_def", {})
        return {name: Signature(name, _dtypes(definition.get("inputs", {})), _shapes(definition.get("outputs", {})),
                                self._caller(name, _dtypes(definition.get("outputs", {}))))
                for name, definition in definitions.items() if name != INIT_OP_SIGNATURE}

    def _caller(self, name: str, outputs: dict[str, str]) -> Callable[[StringColumns], dict[str, np.ndarray]]:
        def call(columns: StringColumns) -> dict[str, np.ndarray]:
            body = (rest_instances_body if self.body_format == "instances" else rest_columnar_body)(columns, name)
            answer = post_rest(body, self.model_name, self.address, self.timeout, self.version)
            return _rest_outputs(answer, outputs)
        return call


def _rest_outputs(answer: dict, outputs: dict[str, str]) -> dict[str, np.ndarray]:
    """TF Serving's answer (`predictions`: a row per example, or `outputs`: a column per output; a lone
    output is given bare) as `{output name: numpy array}` of the `outputs` dtypes."""
    names = sorted(outputs)
    if "outputs" in answer:
        columns = answer["outputs"]
        columns = columns if isinstance(columns, dict) and set(columns) == set(names) else {names[0]: columns}
    else:
        rows = answer.get("predictions", [])
        named = rows and isinstance(rows[0], dict) and set(rows[0]) == set(names)
        columns = {name: [row[name] for row in rows] for name in names} if named else {names[0]: rows}
    return {name: _output_array(values, outputs.get(name)) for name, values in columns.items()}


def _dtypes(tensors: dict) -> dict[str, str]:
    """`{"text": {"dtype": "DT_STRING"}}` as `{"text": "string"}`."""
    return {name: str(info.get("dtype", "")).removeprefix("DT_").lower() for name, info in tensors.items()}


def _shapes(tensors: dict) -> dict[str, tuple]:
    def dimension(size) -> int | None:
        return None if int(size) < 0 else int(size)
    return {name: tuple(dimension(dim.get("size", -1)) for dim in info.get("tensor_shape", {}).get("dim", []))
            for name, info in tensors.items()}


class GrpcServer:
    """A model on TF Serving's gRPC port (needs `tensorflow-serving-api`): signatures from
    `GetModelMetadata`, calls as `PredictRequest`s."""

    def __init__(self, model_name: str, address: str = "localhost:8500", timeout: float = 30.0,
                 version: int | None = None):
        self.model_name, self.timeout, self.version = model_name, timeout, version
        self.address = host_port(address, "grpc")

    @property
    def label(self) -> str:
        return f"{self.model_name} at {self.address}"

    def signatures(self) -> dict[str, Signature]:
        from google.protobuf.json_format import MessageToDict
        from tensorflow_serving.apis import get_model_metadata_pb2

        request = get_model_metadata_pb2.GetModelMetadataRequest()
        name_model(request.model_spec, self.model_name, self.version)
        request.metadata_field.append("signature_def")
        response = call_grpc(request, self.address, self.timeout, "GetModelMetadata")
        definitions = get_model_metadata_pb2.SignatureDefMap()
        response.metadata["signature_def"].Unpack(definitions)
        definitions = MessageToDict(definitions).get("signatureDef", {})
        return {name: Signature(name, _dtypes(definition.get("inputs", {})),
                                _shapes({key: {"tensor_shape": value.get("tensorShape", {})}
                                         for key, value in definition.get("outputs", {}).items()}),
                                self._caller(name))
                for name, definition in definitions.items() if name != INIT_OP_SIGNATURE}

    def _caller(self, name: str) -> Callable[[StringColumns], dict[str, np.ndarray]]:
        import tensorflow as tf

        def call(columns: StringColumns) -> dict[str, np.ndarray]:
            request = grpc_predict_request(columns, self.model_name, name, self.version)
            response = call_grpc(request, self.address, self.timeout)
            return {key: tf.make_ndarray(proto) for key, proto in response.outputs.items()}
        return call
