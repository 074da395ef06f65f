"""TensorFlow Serving's model warm-up: requests stored with an export and replayed when it loads.

The first call of a loaded SavedModel signature instantiates and optimises its graph (about half a
second for the shipped LISA, against ~10 ms for a later call), so without warm-up the first client of
every signature waits. TensorFlow Serving replays the requests in
``assets.extra/tf_serving_warmup_requests`` (a TFRecord file of ``PredictionLog`` protos, at most
:data:`MAX_RECORDS`) before it marks a version available, and fails the load if one fails; see
"SavedModel Warmup" in TensorFlow Serving's guide. :func:`write_warmup_requests` writes one
``predict_log`` per signature of an export (a short English sentence in the signature's inputs);
:func:`replay_warmup_requests` is our server's replay, called by
:func:`export.model_versions.load_version` before a version is served, with the same rules, and
with the request limits a client's request meets.
"""

from __future__ import annotations

import concurrent.futures
import os
import pathlib
from typing import Iterable, Mapping

import numpy as np

from data_pipeline.errors import DataFormatError
from export.request_limits import RequestLimits, check_request
from export.serving_codec import BadRequest
from export.tensor_protos import request_arrays

#: Where TensorFlow Serving looks for warm-up records in a version directory.
WARMUP_FILE = pathlib.Path("assets.extra") / "tf_serving_warmup_requests"
#: TensorFlow Serving refuses a warm-up file with more records than this.
MAX_RECORDS = 1000

_WORDS = ["The", "cat", "sat", "on", "the", "mat", "."]
#: A value for each input name the exports' signatures take (export/saved_model.py), one sentence each.
SAMPLE_INPUTS = {
    "tokens": np.array([_WORDS], dtype=object),
    "parse_heads": np.array([[2, 3, 0, 3, 6, 3, 3]], dtype=np.int32),
    "predicate_index": np.array([2], dtype=np.int32),
    "sentences": np.array([" ".join(_WORDS)], dtype=object),
    "text": np.array(["The cat sat on the mat. It rained."], dtype=object),
}


def write_warmup_requests(version_dir: pathlib.Path, inputs_by_signature: Mapping[str, Iterable[str]]) -> pathlib.Path:
    """Write ``version_dir/assets.extra/tf_serving_warmup_requests``: one ``PredictRequest`` per
    signature, its inputs from :data:`SAMPLE_INPUTS`.

    Args:
        version_dir: the export's version directory.
        inputs_by_signature: each signature's input names.

    Returns:
        The file written.
    """
    import tensorflow as tf
    from tensorflow_serving.apis import predict_pb2, prediction_log_pb2

    path = pathlib.Path(version_dir) / WARMUP_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    with tf.io.TFRecordWriter(str(path)) as writer:
        for name, input_names in sorted(inputs_by_signature.items()):
            request = predict_pb2.PredictRequest()
            request.model_spec.signature_name = name
            for key in input_names:
                request.inputs[key].CopyFrom(tf.make_tensor_proto(SAMPLE_INPUTS[key]))
            log = prediction_log_pb2.PredictionLog(predict_log=prediction_log_pb2.PredictLog(request=request))
            writer.write(log.SerializeToString())
    return path


def replay_warmup_requests(version_dir: pathlib.Path, signatures: Mapping, limits: RequestLimits) -> int:
    """Run each request of the version's warm-up file (if any) through its signature, as TensorFlow
    Serving does before it serves a version.

    A record is a request like any other: its inputs are checked as a gRPC request's are
    (:func:`export.tensor_protos.request_arrays`: each ``TensorProto``'s declared shape against the
    request limits before it is expanded, then :func:`~export.request_limits.check_request` on its
    values) before the signature runs, so a record of 70 bytes declaring ``[20000, 20000]`` strings,
    a sentence of thousands of tokens or a ``text`` of thousands of sentences fails the load in one
    line instead of taking the server's memory. At most ``MAX_RECORDS + 1`` records of the file are
    read, so a file of millions of records is refused without being read whole on the thread that
    loads versions.

    Args:
        version_dir: the version directory.
        signatures: runnable signatures by name (:class:`export.serving_codec.Signature`).
        limits: the version's resolved request limits (no ``None``).

    Returns:
        The number of requests replayed (0 without a warm-up file).

    Raises:
        DataFormatError: an unreadable file, more than :data:`MAX_RECORDS` records, a record that is
            not a predict request, names no signature of the export, is over the request limits, or fails.
    """
    import tensorflow as tf
    from tensorflow_serving.apis import prediction_log_pb2

    path = pathlib.Path(version_dir) / WARMUP_FILE
    if not path.exists():
        return 0
    try:
        # one record past the limit is enough to refuse the file: the rest of it is never read
        records = list(tf.data.TFRecordDataset(str(path)).take(MAX_RECORDS + 1).as_numpy_iterator())
    except tf.errors.OpError as error:
        raise DataFormatError(path, None, f"expected a TFRecord file of PredictionLog protos: {error.message}") from error
    if len(records) > MAX_RECORDS:
        raise DataFormatError(path, None, f"expected at most {MAX_RECORDS} warm-up records, found more than "
                                          f"{MAX_RECORDS}")
    requests = []
    for number, record in enumerate(records, 1):
        where = f"warm-up record {number}"
        log = prediction_log_pb2.PredictionLog()
        try:
            log.ParseFromString(record)
        except Exception as error:  # noqa: BLE001 - protobuf's DecodeError has no common base across versions
            raise DataFormatError(path, None, f"{where}: expected a PredictionLog proto ({error})") from error
        if log.WhichOneof("log_type") != "predict_log":
            raise DataFormatError(path, None, f"{where}: expected a predict_log, found {log.WhichOneof('log_type')}")
        request = log.predict_log.request
        name = request.model_spec.signature_name or "serving_default"
        if name not in signatures:
            raise DataFormatError(path, None, f"{where}: signature '{name}' is not one of the export's "
                                              f"({', '.join(sorted(signatures))})")
        try:
            arrays = request_arrays(request.inputs, signatures[name], limits)
            check_request(arrays, signatures[name], limits)
        except BadRequest as error:
            raise DataFormatError(path, None, f"{where} (signature '{name}') failed: {error.message}") from None
        requests.append((where, name, arrays))

    def run(request):
        where, name, arrays = request
        try:
            signatures[name].function(**arrays)
        except (TypeError, ValueError, tf.errors.OpError) as error:
            return where, name, error
        return None

    # A signature's first call spends its time instantiating and optimising the graph, in TensorFlow's
    # runtime without the GIL: the records (one per signature) run at once, a thread per core, so a
    # version is ready in about the time of its slowest signature rather than the sum. Every record is
    # checked above before any runs; a failure names the first failing record, as one at a time would.
    workers = max(1, min(len(requests), os.cpu_count() or 1))
    with concurrent.futures.ThreadPoolExecutor(workers, thread_name_prefix="warm-up") as pool:
        failures = [failed for failed in pool.map(run, requests) if failed]
    if failures:
        where, name, error = failures[0]
        reason = " ".join(str(getattr(error, "message", error)).split())
        raise DataFormatError(path, None, f"{where} (signature '{name}') failed: {reason}") from error
    return len(records)
