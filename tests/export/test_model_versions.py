"""The version manager behind the REST server: new versions are picked up while serving, a version
that fails to load is skipped with one log line and the good one keeps serving, and the model status
lists every version with its state in TensorFlow Serving's ``model_version_status`` shape. Version
names are ASCII int64s as TensorFlow Serving reads them, and a poll that fails is logged without
stopping the polling.

Model base paths are built in ``tmp_path`` from copies of the tiny model's versions (``conftest.py``:
``scaled_length`` is ``length * 0.25`` in version 1 and ``length * 0.5`` in version 2, so answers say
which version ran).
"""

from __future__ import annotations

import gc
import os
import shutil
import time
import weakref

import pytest

from data_pipeline.errors import DataFormatError
from tests.export import rest_cases

POLL = 1.0  # seconds between polls of the test servers


def _install(source, base, version: int) -> None:
    """Copy a version in as TensorFlow Serving advises: write elsewhere, then rename into place."""
    staging = base / f".incoming-{version}"
    shutil.copytree(source, staging)
    os.rename(staging, base / str(version))


def _corrupt(base, version: int) -> None:
    (base / str(version) / "variables").mkdir(parents=True)
    (base / str(version) / "saved_model.pb").write_bytes(b"\x08\x96\x01 this is not a SavedModel proto \xff" * 8)


def _scale(server, version=None) -> tuple:
    path = rest_cases.PREDICT if version is None else f"/v1/models/{rest_cases.MODEL}/versions/{version}:predict"
    status, answer = rest_cases.request(server.url, "POST", path, {"instances": [["a", "b"]]})
    return status, (answer["predictions"][0]["scaled_length"] / 2 if status == 200 else answer)


def _status(server) -> dict:
    status, answer = rest_cases.request(server.url, "GET", f"/v1/models/{rest_cases.MODEL}")
    assert status == 200
    return {entry["version"]: entry for entry in answer["model_version_status"]}


def _start(base, warnings: list):
    from export import rest_server

    server = rest_server.make_server(rest_cases.MODEL, base, port=0, warn=warnings.append, poll_seconds=POLL)
    server.start_in_thread()
    return server


def _wait_for(condition, seconds: float) -> float:
    """Seconds until ``condition()`` held; fails after ``seconds``."""
    started = time.monotonic()
    while not condition():
        assert time.monotonic() - started < seconds, f"not within {seconds} s"
        time.sleep(0.05)
    return time.monotonic() - started


def test_a_version_copied_in_while_serving_is_served_within_two_polls(tiny_model_base, tmp_path):
    base = tmp_path / rest_cases.MODEL
    base.mkdir()
    _install(tiny_model_base / "1", base, 1)
    server = _start(base, [])
    try:
        assert _scale(server) == (200, 0.25)
        _install(tiny_model_base / "2", base, 2)
        elapsed = _wait_for(lambda: _scale(server) == (200, 0.5), 2 * POLL)
        assert elapsed < 2 * POLL
        # latest policy: the old version is unloaded once the new one is available
        _wait_for(lambda: _status(server)["1"]["state"] == "END", POLL)
        assert _status(server) == {
            "2": {"version": "2", "state": "AVAILABLE", "status": {"error_code": "OK", "error_message": ""}},
            "1": {"version": "1", "state": "END", "status": {"error_code": "OK", "error_message": ""}}}
        status, answer = _scale(server, 1)
        assert status == 404 and "Specific(tiny, 1)" in answer["error"]
    finally:
        server.stop()


def test_a_corrupt_version_beside_a_good_one_is_skipped_with_one_log_line(tiny_model_base, tmp_path):
    """The earlier server did not start at all (a DecodeError traceback without the path)."""
    base = tmp_path / rest_cases.MODEL
    base.mkdir()
    _install(tiny_model_base / "1", base, 1)
    _corrupt(base, 2)
    warnings: list = []
    server = _start(base, warnings)
    try:
        assert _scale(server) == (200, 0.25)
        statuses = _status(server)
        assert statuses["1"]["state"] == "AVAILABLE"
        assert statuses["2"]["state"] == "END" and statuses["2"]["status"]["error_code"] == "UNKNOWN"
        assert str(base / "2") in statuses["2"]["status"]["error_message"]
        time.sleep(2.5 * POLL)  # further polls do not retry the unchanged directory nor log again
        assert len(warnings) == 1 and "\n" not in warnings[0]
        assert warnings[0].startswith(f"version 2 at {base / '2'} failed to load and is skipped: ")
        assert "saved_model.pb" in warnings[0]
        # once the directory is replaced by a good version it is loaded and served
        shutil.rmtree(base / "2")
        _install(tiny_model_base / "2", base, 2)
        _wait_for(lambda: _scale(server) == (200, 0.5), 2 * POLL + 1)
        assert _status(server)["2"]["state"] == "AVAILABLE"
    finally:
        server.stop()


def test_no_loadable_version_is_one_error_naming_the_paths(tmp_path):
    from export import rest_server

    base = tmp_path / rest_cases.MODEL
    _corrupt(base, 3)
    with pytest.raises(DataFormatError) as info:
        rest_server.make_server(rest_cases.MODEL, base, port=0, warn=lambda m: None)
    message = str(info.value)
    assert message.startswith(f"{base}: expected a loadable SavedModel version, none loaded: could not load {base / '3'}")
    assert "Traceback" not in message


def test_num_versions_serves_the_highest_ones(tiny_model_base, tmp_path):
    from export.model_versions import VersionManager

    base = tmp_path / rest_cases.MODEL
    base.mkdir()
    for version in (1, 2):
        _install(tiny_model_base / str(version), base, version)
    one = VersionManager(base, num_versions=1, poll_seconds=0).start()
    both = VersionManager(base, num_versions=2, poll_seconds=0).start()
    assert list(one.available()) == [2] and list(both.available()) == [1, 2]
    assert [s.version for s in one.statuses()] == [2]


def test_version_names_are_read_as_tensorflow_serving_reads_them(tiny_model_base, tmp_path):
    """``²`` passes ``str.isdigit`` but not ``int`` (start-up crashed, and a poll that met it killed the
    polling thread); a number over 2^63 - 1 was served and broke every gRPC answer. Both are ignored
    with one line each, once."""
    from export.model_versions import VersionManager

    base = tmp_path / rest_cases.MODEL
    base.mkdir()
    _install(tiny_model_base / "1", base, 1)
    for name in ("²", "٣", str(2**63), "0" * 30 + "2"):
        shutil.copytree(tiny_model_base / "2", base / name)
    warnings: list = []
    manager = VersionManager(base, num_versions=5, poll_seconds=0, warn=warnings.append).start()
    manager.poll()
    assert list(manager.available()) == [1, 2] and manager.available()[2].path == base / ("0" * 30 + "2")
    ignored = sorted(line.split(" ")[1] for line in warnings)
    assert ignored == sorted(str(base / name) for name in ("²", "٣", str(2**63))), warnings
    assert all(line.endswith("is ignored: a version directory's name is ASCII digits of a number up to "
                             "9223372036854775807 (as TensorFlow Serving reads it)") for line in warnings)


def test_a_failing_poll_is_logged_and_polling_goes_on(tiny_model_base, tmp_path):
    from export.model_versions import VersionManager

    base = tmp_path / rest_cases.MODEL
    base.mkdir()
    _install(tiny_model_base / "1", base, 1)
    warnings: list = []
    manager = VersionManager(base, poll_seconds=0.05, warn=warnings.append)
    polls = []
    poll = manager.poll

    def failing_poll():
        polls.append(1)
        if len(polls) in (2, 3):  # the first poll is start()'s
            raise ValueError("invalid literal for int() with base 10: '²'")
        poll()

    manager.poll = failing_poll
    manager.start()
    try:
        _wait_for(lambda: len(polls) >= 5, 30)
    finally:
        manager.stop()
    assert warnings == [f"polling {base} failed, serving the loaded versions: ValueError: invalid literal for "
                        "int() with base 10: '²'"] * 2
    assert list(manager.available()) == [1]


def test_versions_that_are_no_int64_are_a_400_and_the_largest_is_served_over_grpc(tiny_model_base, tmp_path):
    grpc = pytest.importorskip("grpc")
    import tensorflow as tf
    from tensorflow_serving.apis import predict_pb2, prediction_service_pb2_grpc

    from export.grpc_server import GrpcServer

    base = tmp_path / rest_cases.MODEL
    base.mkdir()
    _install(tiny_model_base / "1", base, 1)
    shutil.copytree(tiny_model_base / "2", base / str(2**63))
    server = _start(base, [])
    grpc_server = GrpcServer(server.service, port=0).start()
    try:
        for path in (f"/v1/models/{rest_cases.MODEL}/versions/{'9' * 5000}",
                     f"/v1/models/{rest_cases.MODEL}/versions/{2**63}/metadata",
                     f"/v1/models/{rest_cases.MODEL}/versions/{2**64}:predict"):
            status, answer = rest_cases.request(server.url, "POST" if path.endswith(":predict") else "GET", path,
                                                {"instances": [["a"]]} if path.endswith(":predict") else None)
            assert status == 400 and answer["error"].startswith("Failed to convert version: "), (path[:60], answer)
            assert "\n" not in answer["error"] and len(answer["error"]) < 200
        assert _scale(server, 1) == (200, 0.25)
        request = predict_pb2.PredictRequest()
        request.model_spec.name = rest_cases.MODEL
        request.inputs["tokens"].CopyFrom(tf.make_tensor_proto([["a"]]))
        with grpc.insecure_channel(grpc_server.target) as channel:
            response = prediction_service_pb2_grpc.PredictionServiceStub(channel).Predict(request, timeout=30)
        assert response.model_spec.version.value == 1
    finally:
        grpc_server.stop()
        server.stop()


@pytest.fixture
def no_automatic_collection():
    """Python's cyclic collector held off during the test, so whatever a poll frees it frees itself."""
    gc.collect()
    gc.disable()
    yield
    gc.enable()


@pytest.fixture
def replayed_graphs(monkeypatch) -> dict:
    """``{version directory name: weak references to its signatures' functions and graphs}``, taken as
    each version's warm-up is about to run."""
    from export import model_versions

    graphs: dict = {}
    replay = model_versions.replay_warmup_requests

    def watched(version_dir, signatures, limits):
        graphs[version_dir.name] = [weakref.ref(held) for signature in signatures.values()
                                    for held in (signature.function, signature.function.graph)]
        return replay(version_dir, signatures, limits)

    monkeypatch.setattr(model_versions, "replay_warmup_requests", watched)
    return graphs


def _fail_warmup(version_dir) -> None:
    import numpy as np
    import tensorflow as tf
    from tensorflow_serving.apis import predict_pb2, prediction_log_pb2

    from export.warmup import WARMUP_FILE

    request = predict_pb2.PredictRequest()
    request.model_spec.signature_name = "not_a_signature"
    request.inputs["tokens"].CopyFrom(tf.make_tensor_proto(np.array([["a"]], dtype=object)))
    (version_dir / WARMUP_FILE).parent.mkdir()
    with tf.io.TFRecordWriter(str(version_dir / WARMUP_FILE)) as writer:
        writer.write(prediction_log_pb2.PredictionLog(
            predict_log=prediction_log_pb2.PredictLog(request=request)).SerializeToString())


def test_a_version_that_fails_its_warm_up_leaves_none_of_its_graphs_alive(tiny_model_base, tmp_path,
                                                                          no_automatic_collection, replayed_graphs):
    """Each of 40 versions failing their warm-up one after another grew the server by ~10 MB: their
    graphs stayed alive until Python's cyclic collector made a full pass, which it seldom does."""
    from export.model_versions import VersionManager

    base = tmp_path / rest_cases.MODEL
    base.mkdir()
    _install(tiny_model_base / "1", base, 1)
    warnings: list = []
    manager = VersionManager(base, num_versions=1, poll_seconds=0, warn=warnings.append).start()
    for version in (2, 3):
        shutil.copytree(tiny_model_base / "2", base / str(version))
        _fail_warmup(base / str(version))
        manager.poll()
    assert list(manager.available()) == [1] and len(warnings) == 2
    assert len(replayed_graphs["2"]) == len(replayed_graphs["3"]) == 6  # 3 signatures: function and graph
    assert [ref() for ref in replayed_graphs["2"] + replayed_graphs["3"]] == [None] * 12
    assert all(ref() is not None for ref in replayed_graphs["1"])  # the version being served
