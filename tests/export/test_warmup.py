"""TensorFlow Serving's warm-up records (:mod:`export.warmup`): written with every export, one
``predict_log`` per signature, and replayed when a version loads (a failing record fails the load, as
in TensorFlow Serving). The first-request latency they remove is measured by
``benchmarks/raw_text_srl.py`` (``--serve``), not here."""

from __future__ import annotations

import gc
import shutil

import numpy as np
import pytest
import tensorflow as tf
from tensorflow_serving.apis import predict_pb2, prediction_log_pb2

from data_pipeline.errors import DataFormatError
from export.model_versions import load_version
from export.warmup import MAX_RECORDS, WARMUP_FILE, write_warmup_requests


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


def _empty_record(tmp_path) -> bytes:
    """One empty record in TFRecord framing, as TensorFlow writes it: its length (0), the length's
    checksum, no data, the data's checksum (16 bytes)."""
    path = tmp_path / "one_empty_record"
    with tf.io.TFRecordWriter(str(path)) as writer:
        writer.write(b"")
    return path.read_bytes()


def test_a_file_of_millions_of_records_is_refused_without_reading_past_one_over_the_limit(tiny_version):
    """2,000,000 empty records (32 MB) took 88 s of the thread that loads versions before they were
    counted. Record 1,002 carries a wrong checksum: a reader that went past record 1,001 fails on it
    instead of refusing the count."""
    record = _empty_record(tiny_version.parent)
    broken = record[:-4] + bytes(byte ^ 0xFF for byte in record[-4:])
    (tiny_version / WARMUP_FILE).parent.mkdir()
    (tiny_version / WARMUP_FILE).write_bytes(
        record * (MAX_RECORDS + 1) + broken + record * (2_000_000 - MAX_RECORDS - 2))
    with pytest.raises(DataFormatError) as failed:
        load_version(1, tiny_version)
    assert str(failed.value) == (f"{tiny_version / WARMUP_FILE}: expected at most 1000 warm-up records, "
                                 "found more than 1000")


def test_a_file_of_as_many_records_as_allowed_is_read(tiny_version):
    (tiny_version / WARMUP_FILE).parent.mkdir()
    (tiny_version / WARMUP_FILE).write_bytes(_empty_record(tiny_version.parent) * MAX_RECORDS)
    with pytest.raises(DataFormatError, match="warm-up record 1: expected a predict_log, found None"):
        load_version(1, tiny_version)


def _declared(value, shape: list):
    """A ``TensorProto`` of one value that declares ``shape`` (nothing makes the two agree)."""
    proto = tf.make_tensor_proto(value)
    proto.tensor_shape.CopyFrom(tf.TensorShape(shape).as_proto())
    return proto


def _raw_request(signature: str, **protos) -> predict_pb2.PredictRequest:
    request = predict_pb2.PredictRequest()
    request.model_spec.signature_name = signature
    for key, proto in protos.items():
        request.inputs[key].CopyFrom(proto)
    return request


@pytest.fixture
def bounded_expansion(monkeypatch):
    """``tf.make_ndarray`` that fails the test when asked to expand a tensor of more than a million
    elements: a record over the limits must be refused on its declared shape, never expanded."""
    expand = tf.make_ndarray

    def guarded(proto):
        elements = int(np.prod([d.size for d in proto.tensor_shape.dim]))
        assert elements <= 10**6, f"a warm-up tensor declaring {elements} elements was expanded"
        return expand(proto)

    monkeypatch.setattr(tf, "make_ndarray", guarded)


def _over_the_limits():
    strings = _declared(np.array([b"a"], dtype=object), [20000, 20000])
    over = "sentences per request: 20000 is over the limit of 256 (--max_sentences_per_request)"
    return {
        # 70 bytes declaring [20000, 20000] strings: 400 million Python objects once expanded
        "declared_strings": (_raw_request("serving_default", tokens=strings), over),
        "declared_heads": (_raw_request("with_parse", tokens=strings,
                                        parse_heads=_declared(np.array([0], np.int32), [20000, 20000])), over),
        "long_sentence": (_request("serving_default", tokens=np.array([["w"] * 3000], dtype=object)),
                          "tokens per sentence ('tokens' is 3000 tokens wide): 3000 is over the limit of 512"),
        "many_sentences": (_request("sentences", sentences=np.array(["Go. " * 3000], dtype=object)),
                           "tokens per sentence ('sentences' instance 0 has 3000 tokens)"),
    }


@pytest.mark.parametrize("case", sorted(_over_the_limits()))
def test_a_record_over_the_request_limits_fails_the_load_before_it_is_expanded(tiny_version, bounded_expansion,
                                                                                case):
    """The tiny model has no run config: its limits are the fallbacks (512 tokens per sentence, 8192 per
    request, 256 sentences)."""
    request, message = _over_the_limits()[case]
    _write(tiny_version, request)
    with pytest.raises(DataFormatError) as failed:
        load_version(1, tiny_version)
    assert "warm-up record 1 (signature " in str(failed.value) and message in str(failed.value)


def test_the_servers_own_limits_apply_to_the_records(tiny_version):
    from export.request_limits import RequestLimits

    _write(tiny_version, _request("serving_default", tokens=np.array([["w"] * 40], dtype=object)))
    assert load_version(1, tiny_version).warmup_requests == 1
    with pytest.raises(DataFormatError, match=r"40 is over the limit of 30 \(--max_tokens_per_sentence\)"):
        load_version(1, tiny_version, limits=RequestLimits(max_tokens_per_sentence=30))


def test_a_version_whose_records_are_over_the_limits_is_skipped_and_the_others_served(tiny_model_base, tmp_path,
                                                                                      bounded_expansion):
    from export.model_versions import VersionManager

    base = tmp_path / "tiny"
    for version in (1, 2):
        shutil.copytree(tiny_model_base / str(version), base / str(version))
    _write(base / "2", _over_the_limits()["declared_strings"][0])
    warnings = []
    versions = VersionManager(base, 1, 0.0, warnings.append).start()
    assert list(versions.available()) == [1]
    assert len(warnings) == 1 and warnings[0].startswith(f"version 2 at {base / '2'} failed to load and is skipped: ")
    assert "sentences per request: 20000 is over the limit of 256" in warnings[0]
    status = {s.version: s for s in versions.statuses()}[2]
    assert status.state == "END" and "over the limit" in status.error_message


def test_a_text_record_of_thousands_of_sentences_fails_the_load(lisa_export, tmp_path, monkeypatch):
    """A ``text`` record is bounded from its string before anything splits it into sentences."""
    _, export = lisa_export
    version = tmp_path / "srl" / "1"
    shutil.copytree(export, version)
    _write(version, _request("text", text=np.array(["Go. " * 3000], dtype=object)))
    monkeypatch.setattr("export.request_limits.tokenized_sentences",
                        lambda text: pytest.fail("a warm-up text over the limits was split into sentences"))
    with pytest.raises(DataFormatError) as failed:
        load_version(1, version)
    assert "warm-up record 1 (signature 'text') failed: tokens per request ('text' holds more than" in str(failed.value)


def _tables(signatures) -> list:
    """The handles of the lookup tables the signatures use (those ``LookupTableSizeV2`` accepts)."""
    tables = []
    for signature in signatures.values():
        for handle in signature.function.captured_inputs:
            try:
                tf.raw_ops.LookupTableSizeV2(table_handle=handle)
            except (tf.errors.InvalidArgumentError, tf.errors.NotFoundError):
                continue  # a variable
            tables.append(handle)
    return tables


def test_a_version_that_fails_its_warm_up_leaves_none_of_its_lookup_tables(lisa_export, tmp_path, monkeypatch):
    """TensorFlow gives each load its own lookup tables and keeps them until they are destroyed: each
    LISA version that failed its warm-up left its vocabularies (about 12 MB) in the server."""
    from export import model_versions

    _, export = lisa_export
    version = tmp_path / "srl" / "1"
    shutil.copytree(export, version)
    _write(version, _request("not_a_signature", tokens=np.array([["a"]], dtype=object)))
    tables = []
    replay = model_versions.replay_warmup_requests

    def watched(version_dir, signatures, limits):
        tables.extend(_tables(signatures))
        return replay(version_dir, signatures, limits)

    monkeypatch.setattr(model_versions, "replay_warmup_requests", watched)
    with pytest.raises(DataFormatError, match="signature 'not_a_signature' is not one of the export's"):
        load_version(1, version)
    gc.collect()
    assert tables
    for table in tables:
        with pytest.raises(tf.errors.NotFoundError):
            tf.raw_ops.LookupTableSizeV2(table_handle=table)
    assert _tables(load_version(1, export, warmup=False).signatures)  # a version that loads keeps its own


def test_a_replaced_version_frees_its_lookup_tables_once_its_last_request_lets_it_go(lisa_export, tmp_path):
    """A version replaced by a newer one kept its tables (20 load and unload cycles grew a server from
    100 to 342 MB); a request that took its signature before the unload must still find them."""
    from export.model_versions import VersionManager

    _, export = lisa_export
    base = tmp_path / "srl"
    base.mkdir()
    shutil.copytree(export, base / "1")
    manager = VersionManager(base, poll_seconds=0, warn=pytest.fail).start()
    held = manager.available()[1].signatures["serving_default"]  # as a request under way holds it
    tables = _tables(manager.available()[1].signatures)
    shutil.copytree(export, base / "2")
    manager.poll()
    assert list(manager.available()) == [2] and tables
    for table in tables:
        tf.raw_ops.LookupTableSizeV2(table_handle=table)  # still there for the request
    del held
    gc.collect()
    for table in tables:
        with pytest.raises(tf.errors.NotFoundError):
            tf.raw_ops.LookupTableSizeV2(table_handle=table)
    for table in _tables(manager.available()[2].signatures):
        tf.raw_ops.LookupTableSizeV2(table_handle=table)  # the version served keeps its own


def test_tables_freed_in_the_middle_of_a_trace_are_freed_and_not_captured(lisa_export):
    """The garbage collector frees an unloaded version's tables whenever it runs, also while another
    function is being traced: the freeing ops became ops of that function, which captured the old
    version's tables (an export traced at that moment failed to save with "an 'untracked' resource")
    and left them alive."""
    _, export = lisa_export

    def loaded():
        signatures = load_version(1, export, warmup=False).signatures
        # the last holder of the version's tables
        return _tables(signatures), [signatures["serving_default"].function.resources]

    tables, held = loaded()

    @tf.function(autograph=False)
    def traced(x):
        held.clear()  # the version let go at this point of the trace: its tables are freed here
        return x + 1

    concrete = traced.get_concrete_function(tf.TensorSpec([], tf.int32))
    assert tables and not concrete.captured_inputs
    more_tables, held = loaded()
    with tf.Graph().as_default():  # or while a graph is built (as tf.saved_model.save builds one)
        held.clear()
    for table in tables + more_tables:
        with pytest.raises(tf.errors.NotFoundError):
            tf.raw_ops.LookupTableSizeV2(table_handle=table)
