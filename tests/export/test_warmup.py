"""TensorFlow Serving's warm-up records (:mod:`export.warmup`): written with every export, one
``predict_log`` per signature, and replayed when a version loads (a failing record fails the load, as
in TensorFlow Serving). The first-request latency they remove is measured by
``benchmarks/raw_text_srl.py`` (``--serve``), not here."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
import tensorflow as tf
from tensorflow_serving.apis import predict_pb2, prediction_log_pb2

from data_pipeline.errors import DataFormatError
from export.model_versions import load_version
from export.warmup import WARMUP_FILE, write_warmup_requests


def _records(version_dir) -> list:
    logs = []
    for record in tf.data.TFRecordDataset(str(version_dir / WARMUP_FILE)).as_numpy_iterator():
        log = prediction_log_pb2.PredictionLog()
        log.ParseFromString(record)
        logs.append(log)
    return logs


def test_an_export_carries_one_predict_request_per_signature(lisa_export):
    """Read back with TensorFlow's own TFRecord reader and the serving protos: each record is a
    ``predict_log`` for one of the export's signatures with exactly its inputs and their dtypes."""
    _, export = lisa_export
    loaded = tf.saved_model.load(str(export))
    logs = _records(export)
    assert all(log.WhichOneof("log_type") == "predict_log" for log in logs)
    requests = {log.predict_log.request.model_spec.signature_name: log.predict_log.request for log in logs}
    assert len(requests) == len(logs) and set(requests) == set(loaded.signatures)
    for name, request in requests.items():
        _, specs = loaded.signatures[name].structured_input_signature
        assert set(request.inputs) == set(specs), name
        for key, spec in specs.items():
            value = tf.make_ndarray(request.inputs[key])
            assert tf.as_dtype(request.inputs[key].dtype) == spec.dtype and value.ndim == spec.shape.rank
        out = loaded.signatures[name](**{k: tf.make_ndarray(p) for k, p in request.inputs.items()})
        assert int(np.sum(out["lengths"])) > 0  # a real sentence: the replay runs the whole model


@pytest.fixture
def tiny_version(tiny_model_base, tmp_path):
    version = tmp_path / "tiny" / "1"
    shutil.copytree(tiny_model_base / "1", version)
    return version


def _write(version, *requests) -> None:
    (version / WARMUP_FILE).parent.mkdir(exist_ok=True)
    with tf.io.TFRecordWriter(str(version / WARMUP_FILE)) as writer:
        for request in requests:
            writer.write(prediction_log_pb2.PredictionLog(
                predict_log=prediction_log_pb2.PredictLog(request=request)).SerializeToString())


def _request(signature: str, **inputs) -> predict_pb2.PredictRequest:
    request = predict_pb2.PredictRequest()
    request.model_spec.signature_name = signature
    for key, value in inputs.items():
        request.inputs[key].CopyFrom(tf.make_tensor_proto(value))
    return request


def test_a_version_replays_its_records_before_it_is_served(tiny_version):
    write_warmup_requests(tiny_version, {"serving_default": ["tokens"], "with_parse": ["tokens", "parse_heads"],
                                         "sentences": ["sentences"]})
    assert load_version(1, tiny_version).warmup_requests == 3
    assert load_version(1, tiny_version, warmup=False).warmup_requests == 0  # a one-off command's load
    shutil.rmtree(tiny_version / WARMUP_FILE.parent)
    assert load_version(1, tiny_version).warmup_requests == 0


@pytest.mark.parametrize("requests, message", [
    ([_request("nope", tokens=np.array([["a"]], dtype=object))],
     "warm-up record 1: signature 'nope' is not one of the export's (sentences, serving_default, with_parse)"),
    ([_request("sentences", sentences=np.array(["a b"], dtype=object)),
      _request("with_parse", tokens=np.array([["a", "b"]], dtype=object), parse_heads=np.array([[0, 7]], np.int32))],
     "warm-up record 2 (signature 'with_parse') failed: "),
    ([_request("serving_default", sentences=np.array(["a"], dtype=object))],
     "warm-up record 1 (signature 'serving_default') failed: "),
])
def test_a_failing_record_fails_the_load_naming_it(tiny_version, requests, message):
    _write(tiny_version, *requests)
    with pytest.raises(DataFormatError) as failed:
        load_version(1, tiny_version)
    assert message in str(failed.value) and str(WARMUP_FILE) in str(failed.value)


def test_a_file_that_is_not_prediction_logs_fails_the_load(tiny_version):
    (tiny_version / WARMUP_FILE).parent.mkdir()
    (tiny_version / WARMUP_FILE).write_bytes(b"not a TFRecord file at all")
    with pytest.raises(DataFormatError, match="expected a TFRecord file of PredictionLog protos"):
        load_version(1, tiny_version)
