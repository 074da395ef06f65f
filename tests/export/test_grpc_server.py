"""TensorFlow Serving's gRPC API (:mod:`export.grpc_server`) with a stock ``tensorflow-serving-api`` client.

The shared REST request suite (``rest_cases.py``) runs over gRPC wherever a gRPC client can send
the same request: its JSON is turned into ``TensorProto`` inputs as a client would (with the
signature's dtypes from ``GetModelMetadata``), and the answer tensors back into the REST JSON the
case expects. Cases about HTTP or JSON itself (paths, raw bodies, JSON types a tensor cannot hold)
are skipped with the reason.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

grpc = pytest.importorskip("grpc")
pytest.importorskip("tensorflow_serving.apis.prediction_service_pb2_grpc")

from tests.export import rest_cases  # noqa: E402

_API = re.compile(r"/v1/models/([^/:]+)(?:/versions/(\d+))?(:predict|/metadata)?", re.IGNORECASE)
_CODES = {404: "NOT_FOUND", 413: "RESOURCE_EXHAUSTED"}


@pytest.fixture(scope="module")
def grpc_server(tiny_model_base):
    from export import rest_server
    from export.grpc_server import GrpcServer
    from export.model_versions import VersionManager

    versions = VersionManager(tiny_model_base, 2, 0.0, print).start()
    server = GrpcServer(rest_server.PredictionService(rest_cases.MODEL, versions), port=0).start()
    yield server
    server.stop()
    versions.stop()


@pytest.fixture(scope="module")
def stubs(grpc_server):
    from tensorflow_serving.apis import model_service_pb2_grpc, prediction_service_pb2_grpc

    channel = grpc.insecure_channel(grpc_server.target)
    yield prediction_service_pb2_grpc.PredictionServiceStub(channel), model_service_pb2_grpc.ModelServiceStub(channel)
    channel.close()


def _to_json(message) -> dict:
    from google.protobuf import json_format

    return json_format.MessageToDict(message, preserving_proto_field_name=True,
                                     always_print_fields_with_no_presence=True)


def _spec(request, name: str, version) -> None:
    request.model_spec.name = name
    if version is not None:
        request.model_spec.version.value = int(version)


def _metadata(prediction, name: str, version) -> dict:
    """``GetModelMetadata`` as the REST API's JSON."""
    from tensorflow_serving.apis import get_model_metadata_pb2

    request = get_model_metadata_pb2.GetModelMetadataRequest(metadata_field=["signature_def"])
    _spec(request, name, version)
    response = prediction.GetModelMetadata(request, timeout=30)
    signature_map = get_model_metadata_pb2.SignatureDefMap()
    response.metadata["signature_def"].Unpack(signature_map)
    spec = _to_json(response.model_spec)
    return {"model_spec": {"name": spec["name"], "signature_name": spec["signature_name"], "version": spec["version"]},
            "metadata": {"signature_def": _to_json(signature_map)}}


def _client_signatures(prediction, version) -> dict:
    """The signatures as a client learns them from ``GetModelMetadata`` (for building tensors)."""
    from export.serving_codec import InputSpec, Signature

    defs = _metadata(prediction, rest_cases.MODEL, version)["metadata"]["signature_def"]["signature_def"]
    signatures = {}
    for name, definition in defs.items():
        inputs = {key: InputSpec(key, info["dtype"], tuple(None for _ in info["tensor_shape"]["dim"]))
                  for key, info in sorted(definition["inputs"].items())}
        signatures[name] = Signature(name, inputs, sorted(definition["outputs"]), definition["method_name"], None)
    return signatures


def _predict_request(prediction, case, name: str, version):
    """The case's JSON as a ``PredictRequest`` (and its REST format), or ``pytest.skip`` when a gRPC client
    could not build the tensors (the JSON codec refuses it)."""
    import tensorflow as tf
    from tensorflow_serving.apis import predict_pb2

    from export.serving_codec import BadRequest, NUMPY_DTYPES, parse_predict_request

    if isinstance(case.body, bytes):
        pytest.skip("a raw JSON body: nothing a gRPC client sends")
    signatures = _client_signatures(prediction, version) if name == rest_cases.MODEL else {}
    request = predict_pb2.PredictRequest()
    _spec(request, name, version)
    unknown = {}

    def signature(key: str):
        if key not in signatures:  # sent as named; the server answers
            unknown["name"] = key
            raise LookupError(key)
        return signatures[key]

    try:
        chosen, form, arrays = parse_predict_request(json.dumps(case.body).encode(), signature)
    except LookupError:
        request.model_spec.signature_name = unknown["name"]
        return request, "row"
    except BadRequest as error:
        pytest.skip(f"the JSON cannot be made into tensors ({error.message})")
    request.model_spec.signature_name = chosen.name
    for key, array in arrays.items():
        dtype = tf.as_dtype(NUMPY_DTYPES[chosen.inputs[key].dtype])
        request.inputs[key].CopyFrom(tf.make_tensor_proto(array, dtype=dtype))
    return request, form


def _grpc_answer(stubs, case) -> tuple:
    """Send ``case`` over gRPC; ``(status code name, answer as the REST JSON or the error details)``."""
    import tensorflow as tf
    from tensorflow_serving.apis import get_model_status_pb2

    from export.serving_codec import outputs_to_json

    prediction, models = stubs
    match = _API.fullmatch(case.path)
    if not match or (match.group(3) or "").lower() == ":predict" and case.method != "POST" \
            or (match.group(3) or "").lower() != ":predict" and case.method != "GET":
        pytest.skip("an HTTP path or method with no gRPC counterpart")
    name, version, verb = match.groups()
    try:
        if verb is None:
            request = get_model_status_pb2.GetModelStatusRequest()
            _spec(request, name, version)
            return "OK", _to_json(models.GetModelStatus(request, timeout=30))
        if verb.lower() == "/metadata":
            return "OK", _metadata(prediction, name, version)
        request, form = _predict_request(prediction, case, name, version)
        response = prediction.Predict(request, timeout=30)
        outputs = {key: tf.make_ndarray(value) for key, value in response.outputs.items()}
        return "OK", outputs_to_json(outputs, form)
    except grpc.RpcError as error:
        return error.code().name, error.details()


@pytest.mark.parametrize("case", rest_cases.all_cases(), ids=lambda c: c.name)
def test_request_suite_over_grpc(stubs, case):
    code, answer = _grpc_answer(stubs, case)
    if not case.is_error:
        assert code == "OK", f"{case.name}: {code} {answer!r}"
        if case.expect is not None:
            assert answer == case.expect, f"{case.name}: answer {answer!r}\n expected {case.expect!r}"
        if case.check is not None:
            case.check(answer, "own")
        return
    over_a_limit = case.status == 413 or case.own_only == rest_cases.LIMITS
    expected = "RESOURCE_EXHAUSTED" if over_a_limit else _CODES.get(case.status, "INVALID_ARGUMENT")
    assert code == expected, f"{case.name}: {code} {answer!r}, expected {expected}"
    assert answer.strip() and "\n" not in answer, f"{case.name}: details {answer!r}"
    if case.message_contains:
        assert case.message_contains in answer, f"{case.name}: details {answer!r}"
    leaked = [f for f in rest_cases.TF_INTERNALS if f in answer]
    assert not leaked, f"{case.name}: TensorFlow internals {leaked} in {answer!r}"


def _predict(stubs, inputs: dict, signature: str = "", version=None, output_filter=()):
    import tensorflow as tf
    from tensorflow_serving.apis import predict_pb2

    request = predict_pb2.PredictRequest(output_filter=list(output_filter))
    _spec(request, rest_cases.MODEL, version)
    request.model_spec.signature_name = signature
    for key, value in inputs.items():
        request.inputs[key].CopyFrom(value if not isinstance(value, (list, np.ndarray)) else tf.make_tensor_proto(value))
    return stubs[0].Predict(request, timeout=30)


def test_grpc_answers_carry_the_version_and_filter_outputs(stubs):
    import tensorflow as tf

    response = _predict(stubs, {"tokens": [["a", "bb", ""]]}, version=1, output_filter=["byte_lengths"])
    assert response.model_spec.version.value == 1 and response.model_spec.signature_name == "serving_default"
    assert set(response.outputs) == {"byte_lengths"}
    assert tf.make_ndarray(response.outputs["byte_lengths"]).tolist() == [[1, 2, 0]]


@pytest.mark.parametrize("inputs, signature, output_filter, code, words", [
    ({"tokens": np.array([[1, 2]], np.int32)}, "", (), "INVALID_ARGUMENT", "input 'tokens' is DT_INT32"),
    ({"tokens": [["a"]], "words": [["a"]]}, "", (), "INVALID_ARGUMENT", "Unknown named input(s): words"),
    ({"tokens": [["a"]]}, "with_parse", (), "INVALID_ARGUMENT", "Missing named input: parse_heads"),
    ({"tokens": [["a", "b"]], "parse_heads": np.array([[0]], np.int32)}, "with_parse", (), "INVALID_ARGUMENT",
     "must agree in length"),
    ({"tokens": [["a"]]}, "", ("nope",), "INVALID_ARGUMENT", "output_filter: unknown output 'nope'"),
    ({"tokens": [["w"] * 513]}, "", (), "RESOURCE_EXHAUSTED", "tokens per sentence"),
])
def test_grpc_refusals_name_the_field(stubs, inputs, signature, output_filter, code, words):
    with pytest.raises(grpc.RpcError) as raised:
        _predict(stubs, inputs, signature, output_filter=output_filter)
    assert raised.value.code().name == code and words in raised.value.details(), raised.value.details()


def _tensor(dtype: int, shape: list, strings=(), ints=(), content: bytes = b""):
    """A ``TensorProto`` built field by field, as a client may send it (nothing checks it agrees with itself)."""
    from tensorflow.core.framework import tensor_pb2, tensor_shape_pb2

    proto = tensor_pb2.TensorProto(dtype=dtype, tensor_content=content, tensor_shape=tensor_shape_pb2.TensorShapeProto(
        dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=size) for size in shape]))
    proto.string_val.extend(strings)
    proto.int_val.extend(ints)
    return proto


@pytest.mark.parametrize("inputs, signature, code, words", [
    # 82 bytes on the wire; tf.make_ndarray would expand the one head to 20000 x 20000 int32 (1.6 GB)
    ({"tokens": (7, [1, 1], [b"a"]), "parse_heads": (3, [20000, 20000], (), [0])}, "with_parse", "INVALID_ARGUMENT",
     "inputs 'parse_heads' and 'tokens' of signature 'with_parse' are declared with the same shape"),
    ({"tokens": (7, [20000, 20000], [b"a"]), "parse_heads": (3, [20000, 20000], (), [0])}, "with_parse",
     "RESOURCE_EXHAUSTED", "sentences per request: 20000 is over the limit of 256"),
    ({"tokens": (7, [1, 100000], [b"a"])}, "", "RESOURCE_EXHAUSTED", "tokens per sentence ('tokens' is 100000 tokens"),
    ({"tokens": (7, [100000, 100000], [b"a", b"b"])}, "", "INVALID_ARGUMENT", "has 10000000000 elements"),
    ({"tokens": (999, [1, 1], [b"a"])}, "", "INVALID_ARGUMENT",
     "input 'tokens' has dtype enum 999, which is no TensorFlow DataType; the signature expects DT_STRING"),
    ({"tokens": (7, [-1, 3], [b"a"])}, "", "INVALID_ARGUMENT", "declares shape [-1, 3]; expected sizes >= 0"),
    ({"tokens": (7, [1, 2], [b"a", b"b", b"c"])}, "", "INVALID_ARGUMENT", "holds 3 values but its shape [1, 2]"),
    ({"tokens": (7, [1, 1], [b"a"]), "parse_heads": (3, [1, 1], (), (), b"\0" * 40)}, "with_parse",
     "INVALID_ARGUMENT", "holds 40 bytes of tensor_content but its shape [1, 1] needs 1 x 4 bytes"),
    ({"tokens": (7, [300, 1], [b"a"] * 300)}, "", "RESOURCE_EXHAUSTED",
     "sentences per request: 300 is over the limit of 256 (--max_sentences_per_request)"),
    ({"tokens": (7, [0, 10**15])}, "", "RESOURCE_EXHAUSTED", "tokens per sentence ('tokens' is 1000000000000000 tokens"),
    ({"tokens": (7, [15, 512], [b"said"] * 15 * 512)}, "", "RESOURCE_EXHAUSTED", "--max_token_pairs_per_request"),
])
def test_declared_shapes_dtypes_and_value_counts_are_checked_before_tensors_are_expanded(
        stubs, monkeypatch, inputs, signature, code, words):
    """A ``TensorProto`` is a declaration: its shape, dtype and value count are checked (and the shape
    against the limits) before ``tf.make_ndarray`` runs; the answer is one line, never ``INTERNAL``."""
    import tensorflow as tf

    monkeypatch.setattr(tf, "make_ndarray", lambda proto: pytest.fail("tf.make_ndarray ran on a refused tensor"))
    with pytest.raises(grpc.RpcError) as raised:
        _predict(stubs, {name: _tensor(*fields) for name, fields in inputs.items()}, signature)
    assert raised.value.code().name == code and words in raised.value.details(), raised.value.details()
    assert "\n" not in raised.value.details()


def test_a_single_value_fills_a_shape_inside_the_limits_as_tensorflow_expands_it(stubs):
    """``tf.make_tensor_proto("a", shape=[1, 3])`` sends one value for three elements; TensorFlow (and so
    TensorFlow Serving) fills the shape with it."""
    filled = _predict(stubs, {"tokens": _tensor(7, [1, 3], [b"a"])}, "")
    spelled_out = _predict(stubs, {"tokens": _tensor(7, [1, 3], [b"a"] * 3)}, "")
    assert filled == spelled_out


def test_grpc_message_over_the_size_limit_is_resource_exhausted(tiny_model_base):
    from export import rest_server
    from export.grpc_server import GrpcServer
    from export.model_versions import VersionManager
    from tensorflow_serving.apis import prediction_service_pb2_grpc

    versions = VersionManager(tiny_model_base, 1, 0.0, print).start()
    server = GrpcServer(rest_server.PredictionService(rest_cases.MODEL, versions), port=0,
                        max_message_bytes=10_000).start()
    try:
        with grpc.insecure_channel(server.target) as channel:
            stub = prediction_service_pb2_grpc.PredictionServiceStub(channel)
            with pytest.raises(grpc.RpcError) as raised:
                _predict((stub,), {"tokens": [["x" * 100] * 200]})
            assert raised.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert len(_predict((stub,), {"tokens": [["ok"]]}).outputs) == len(rest_cases.TOKEN_OUTPUTS)
    finally:
        server.stop()
        versions.stop()


def test_serve_command_answers_grpc_with_batching(tiny_model_base, tmp_path):
    import subprocess
    import sys

    from tensorflow_serving.apis import prediction_service_pb2_grpc

    from tests.export.test_rest_server import ROOT, _env

    parameters = tmp_path / "batching.txt"
    parameters.write_text("max_batch_size { value: 8 }\nbatch_timeout_micros { value: 1000 }\n")
    process = subprocess.Popen(
        [sys.executable, "-m", "lisa_tf", "serve", "--model_name", rest_cases.MODEL, "--model_base_path",
         str(tiny_model_base), "--rest_api_port", "0", "--port", "0", "--batching_parameters_file", str(parameters)],
        cwd=ROOT, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        target = None
        for _ in range(5):
            line = process.stdout.readline()
            if "gRPC API at " in line:
                target = line.split("gRPC API at ", 1)[1].strip()
                break
        assert target is not None and target.startswith("127.0.0.1:") and not target.endswith(":0")
        with grpc.insecure_channel(target) as channel:
            stub = prediction_service_pb2_grpc.PredictionServiceStub(channel)
            import tensorflow as tf

            response = _predict((stub,), {"tokens": [["one", "three"]]})
            assert tf.make_ndarray(response.outputs["byte_lengths"]).tolist() == [[3, 5]]
    finally:
        process.terminate()
        process.communicate(timeout=30)
    assert process.returncode == 0


def test_serve_command_reports_a_bad_batching_parameters_file(tiny_model_base, tmp_path):
    import subprocess
    import sys

    from tests.export.test_rest_server import ROOT, _env

    parameters = tmp_path / "batching.txt"
    parameters.write_text("max_batch_size: 8\n")
    result = subprocess.run(
        [sys.executable, "-m", "lisa_tf", "serve", "--model_name", rest_cases.MODEL, "--model_base_path",
         str(tiny_model_base), "--rest_api_port", "0", "--batching_parameters_file", str(parameters)],
        cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert "--batching_parameters_file" in result.stderr and "max_batch_size" in result.stderr
    assert "Traceback" not in result.stderr
