"""Server-side batching of concurrent ``:predict`` requests, as TensorFlow Serving's ``--enable_batching``.

Requests that arrive within ``batch_timeout_micros`` of each other for the same version and
signature are joined (a batch waits for more only while other requests are in the server: a lone
client's requests run at once) into one model call of at most ``max_batch_size`` sentences and
``max_batch_tokens`` padded tokens (sentences × the widest sentence: sentences vary in length, and a
batch costs its padded size). The joined inputs are padded to a common width and each caller gets
exactly its own rows back, cut to its own width, so an answer does not depend on what it was batched
with.

Only requests that can be joined faithfully are: the row format (``instances``), inputs of the rank
the signature declares, rank 1 or 2, and rank-2 inputs of one width other than 0 (a request without
tokens gets the answer, or the error, it gets alone). Whether a signature's outputs
can be split back is learnt once per version and signature by a probe: its first request is run as
sent and once more padded by one position (a first request the model refuses probes nothing: the
next one probes), and the signature is batched only when every output
dimension that is not fixed either grows with the width (a token axis, cut back per request), is the
batch axis, or is the predicate axis, and the padded answer cut back equals the plain one (floats to
1e-5, relative). The predicate axis is the one data-dependent size that can be split back: LISA and
SA find their own predicates, and their exports answer ``predicate_positions`` ``[batch, predicates]``
padded with -1, with every per-predicate output padded alike (``""``, 0); in a joined answer that axis
is as long as the batch's busiest sentence, and each request's part is cut back to its own busiest
sentence's count — the length its lone answer has. Other data-dependent sizes (argument spans, words
split in-graph) make a signature run one request at a time. A joined call that the model refuses is
run again one request at a time, so each caller gets its own answer or error.

Parameters are read from TensorFlow Serving's ``--batching_parameters_file`` text proto
(``BatchingParameters``: ``max_batch_size``, ``batch_timeout_micros``, ``num_batch_threads``, each
``{ value: N }``) with one field of our own, ``max_batch_tokens``.
"""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from typing import Callable, Mapping, Optional, Sequence

import numpy as np

from export.serving_codec import BadRequest, Signature

#: Padding of the inputs the project's exports take by name (heads: -1 marks padding); other
#: string inputs pad with ``""`` and numbers with 0.
PAD_VALUES = {"parse_heads": -1, "tokens": b""}

#: The output that counts a data-dependent predicate axis: ``[batch, predicates]``, -1 on padding.
PREDICATE_AXIS = "predicate_positions"

#: An axis entry of a split plan: the predicate axis (else ``None``, fixed, or an offset from the width).
_PREDICATES = "predicates"
DEFAULT_MAX_BATCH_SIZE = 32
DEFAULT_BATCH_TIMEOUT_MICROS = 2000
DEFAULT_MAX_BATCH_TOKENS = 4096
FLOAT_TOLERANCE = 1e-5


@dataclasses.dataclass(frozen=True)
class BatchingParameters:
    """How requests are joined.

    Args:
        max_batch_size: most sentences in one model call.
        batch_timeout_micros: how long the first request of a batch waits for others.
        max_batch_tokens: most padded tokens (sentences × widest sentence) in one model call.
        num_batch_threads: model calls run at once.
    """

    max_batch_size: int = DEFAULT_MAX_BATCH_SIZE
    batch_timeout_micros: int = DEFAULT_BATCH_TIMEOUT_MICROS
    max_batch_tokens: int = DEFAULT_MAX_BATCH_TOKENS
    num_batch_threads: int = os.cpu_count() or 1


def _parameters_message_class():
    """TensorFlow Serving's ``BatchingParameters`` message (same field numbers) plus ``max_batch_tokens``."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, wrappers_pb2

    pool = descriptor_pool.DescriptorPool()
    pool.AddSerializedFile(wrappers_pb2.DESCRIPTOR.serialized_pb)
    file = descriptor_pb2.FileDescriptorProto(name="lisa_tf_batching.proto", package="lisa_tf.serving",
                                              syntax="proto3", dependency=["google/protobuf/wrappers.proto"])
    message = file.message_type.add(name="BatchingParameters")
    fields = [("max_batch_size", 1, "Int64Value"), ("batch_timeout_micros", 2, "Int64Value"),
              ("max_enqueued_batches", 3, "Int64Value"), ("num_batch_threads", 4, "Int64Value"),
              ("thread_pool_name", 5, "StringValue"), ("max_batch_tokens", 100, "Int64Value")]
    for name, number, kind in fields:
        message.field.add(name=name, number=number, type=descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE,
                          type_name=f".google.protobuf.{kind}", label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
    message.field.add(name="allowed_batch_sizes", number=6, type=descriptor_pb2.FieldDescriptorProto.TYPE_INT64,
                      label=descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED)
    message.field.add(name="pad_variable_length_inputs", number=7, type=descriptor_pb2.FieldDescriptorProto.TYPE_BOOL,
                      label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
    pool.Add(file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("lisa_tf.serving.BatchingParameters"))


def read_batching_parameters(path: os.PathLike | str) -> BatchingParameters:
    """``--batching_parameters_file``: a ``BatchingParameters`` text proto; unset fields keep the defaults.

    Raises:
        ValueError: one line naming the file and the field that could not be read.
    """
    from google.protobuf import text_format

    message = _parameters_message_class()()
    try:
        with open(path, encoding="utf-8") as handle:
            text_format.Parse(handle.read(), message)
    except (OSError, UnicodeDecodeError, text_format.ParseError) as error:
        raise ValueError(f"--batching_parameters_file {path}: expected a BatchingParameters text proto "
                         f"(e.g. 'max_batch_size {{ value: 32 }}'): {error}") from None
    values = {}
    for name in ("max_batch_size", "batch_timeout_micros", "max_batch_tokens", "num_batch_threads"):
        if message.HasField(name):
            value = getattr(message, name).value
            if value < (0 if name == "batch_timeout_micros" else 1):
                raise ValueError(f"--batching_parameters_file {path}: {name} is {value}; expected a whole number "
                                 f">= {0 if name == 'batch_timeout_micros' else 1}")
            values[name] = int(value)
    return BatchingParameters(**values)


# --------------------------------------------------------------------------------------------------
# Padding, joining and splitting
# --------------------------------------------------------------------------------------------------


def _pad_value(name: str, array: np.ndarray):
    if name in PAD_VALUES:
        return PAD_VALUES[name]
    return b"" if array.dtype == object else 0


def _width(arrays: Mapping[str, np.ndarray]) -> Optional[int]:
    """The common width of the rank-2 inputs (``None`` without any; -1 when they differ)."""
    widths = {a.shape[1] for a in arrays.values() if a.ndim == 2}
    if not widths:
        return None
    return widths.pop() if len(widths) == 1 else -1


def pad_to_width(arrays: Mapping[str, np.ndarray], width: int) -> dict:
    """Rank-2 inputs padded on the right to ``width`` (their pad values: ``""``, ``-1`` for heads, 0)."""
    padded = {}
    for name, array in arrays.items():
        if array.ndim == 2 and array.shape[1] < width:
            extra = np.full((array.shape[0], width - array.shape[1]), _pad_value(name, array), dtype=array.dtype)
            array = np.concatenate([array, extra], axis=1)
        padded[name] = array
    return padded


@dataclasses.dataclass(frozen=True)
class _SplitPlan:
    """Per output, per non-batch axis: ``None`` (fixed), the offset of its size from the input width, or
    ``"predicates"`` (as long as the busiest row's count in ``predicate_positions``)."""

    offsets: dict


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    if a.shape != b.shape:
        return False
    if a.dtype.kind == "f":
        return bool(np.allclose(a, b, rtol=FLOAT_TOLERANCE, atol=FLOAT_TOLERANCE, equal_nan=True))
    return bool(np.array_equal(a, b))


def predicate_count(outputs: Mapping[str, np.ndarray]) -> Optional[int]:
    """The predicate axis's length in a lone answer of these rows: the most predicates any row has."""
    positions = outputs.get(PREDICATE_AXIS)
    if positions is None or positions.ndim != 2:
        return None
    return int((positions >= 0).sum(axis=1).max(initial=0))


def _cut(output: np.ndarray, axes: Sequence, width: Optional[int], predicates: Optional[int]) -> np.ndarray:
    index = tuple(slice(None) if offset is None else slice(0, predicates) if offset == _PREDICATES
                  else slice(0, width + offset) for offset in axes)
    return output[(slice(None),) + index]


def make_plan(signature: Signature, arrays: Mapping[str, np.ndarray], plain: Mapping[str, np.ndarray],
              padded: Optional[Mapping[str, np.ndarray]]) -> Optional[_SplitPlan]:
    """How to split joined outputs, from one request's plain answer and its answer padded by one position.

    Returns ``None`` when the signature's answers cannot be split back exactly (see the module notes).
    """
    width = _width(arrays)
    declared = signature.function.structured_outputs
    predicates = predicate_count(plain)
    if predicates is not None and plain[PREDICATE_AXIS].shape[1] != predicates:
        predicates = None  # not padded as the rule says: no predicate axis
    offsets = {}
    for name, output in plain.items():
        spec_shape = declared[name].shape
        if spec_shape.rank is None or spec_shape.rank != output.ndim or output.ndim == 0:
            return None
        axes = []
        for axis in range(1, output.ndim):
            if spec_shape[axis] is not None:
                axes.append(None)
                continue
            if padded is None or width is None:
                return None
            grown = padded[name].shape[axis] - output.shape[axis]
            if grown == 1:
                axes.append(output.shape[axis] - width)
            elif grown == 0 and predicates is not None and output.shape[axis] == predicates:
                axes.append(_PREDICATES)
            else:
                return None
        offsets[name] = tuple(axes)
        if padded is not None and not _same(_cut(padded[name], axes, width, predicates), output):
            return None
    return _SplitPlan(offsets)


# --------------------------------------------------------------------------------------------------
# The batcher
# --------------------------------------------------------------------------------------------------


class _Pending:
    """One request waiting in a batch."""

    def __init__(self, arrays: Mapping[str, np.ndarray]):
        self.arrays = arrays
        self.rows = next(iter(arrays.values())).shape[0]
        self.width = _width(arrays) or 1
        self.result: Optional[dict] = None
        self.error: Optional[BaseException] = None


class _Batch:
    def __init__(self):
        self.items: list = []
        self.rows = 0
        self.width = 1
        self.closed = False
        self.done = threading.Event()

    def fits(self, item: _Pending, parameters: BatchingParameters) -> bool:
        rows = self.rows + item.rows
        return (not self.closed and rows <= parameters.max_batch_size
                and rows * max(self.width, item.width) <= parameters.max_batch_tokens)


class Batcher:
    """Joins concurrent requests into shared model calls (see the module notes).

    Args:
        parameters: batch size, token budget, timeout and model-call concurrency.
        run: runs a signature on numpy inputs, returns numpy outputs; raises ``BadRequest`` for inputs
            the model refuses.
    """

    def __init__(self, parameters: BatchingParameters,
                 run: Callable[[Signature, Mapping[str, np.ndarray]], dict]):
        self.parameters = parameters
        self._run = run
        self._lock = threading.Condition()
        self._open: dict = {}
        self._plans: dict = {}
        self._calls = threading.Semaphore(parameters.num_batch_threads)
        self.model_calls = 0
        self.joined_calls = 0
        self._in_flight = 0  # requests inside predict()

    def _call(self, signature: Signature, arrays: Mapping[str, np.ndarray]) -> dict:
        with self._calls:
            with self._lock:
                self.model_calls += 1
            return self._run(signature, arrays)

    def predict(self, key: tuple, signature: Signature, form: str, arrays: Mapping[str, np.ndarray]) -> dict:
        """Outputs of ``signature`` on ``arrays``, run in a joined batch when possible.

        Args:
            key: identifies the loaded version (requests join only with the same key and signature).
            signature: the signature to run.
            form: ``"row"`` or ``"columnar"``; only rows are joined.
            arrays: the request's checked inputs.
        """
        with self._lock:
            self._in_flight += 1
        try:
            return self._predict(key, signature, form, arrays)
        finally:
            with self._lock:
                self._in_flight -= 1
                self._lock.notify_all()  # a batch waiting for company re-checks whether any is left

    def _predict(self, key: tuple, signature: Signature, form: str, arrays: Mapping[str, np.ndarray]) -> dict:
        # a zero-width request is run as sent: padded into a batch it would run on tokens it does not have
        joinable = (form == "row" and _width(arrays) not in (-1, 0)
                    and all(1 <= a.ndim <= 2 and a.ndim == len(signature.inputs[n].shape or ())
                            for n, a in arrays.items())
                    and next(iter(arrays.values())).shape[0] <= self.parameters.max_batch_size)
        if not joinable:
            return self._call(signature, arrays)
        plan_key = key + (signature.name,)
        with self._lock:
            known = plan_key in self._plans
            if not known:
                self._plans[plan_key] = "probing"
        if not known:
            return self._probe(plan_key, signature, arrays)
        plan = self._plans[plan_key]
        if not isinstance(plan, _SplitPlan):
            return self._call(signature, arrays)
        return self._join(plan_key, plan, signature, arrays)

    def _probe(self, plan_key: tuple, signature: Signature, arrays: Mapping[str, np.ndarray]) -> dict:
        """Run the first request of a signature alone and learn from it whether the signature can be
        batched; a request that fails teaches nothing, so the next request probes again."""
        try:
            plain = self._call(signature, arrays)
            width = _width(arrays)
            padded = None
            if width is not None:
                try:
                    padded = self._call(signature, pad_to_width(arrays, width + 1))
                except BadRequest:
                    padded = None
            plan = make_plan(signature, arrays, plain, padded)
        except BaseException:
            with self._lock:
                del self._plans[plan_key]
            raise
        with self._lock:
            self._plans[plan_key] = plan if plan is not None else "alone"
        return plain

    def _join(self, plan_key: tuple, plan: _SplitPlan, signature: Signature, arrays: Mapping[str, np.ndarray]) -> dict:
        item = _Pending(arrays)
        with self._lock:
            batch = self._open.get(plan_key)
            leader = batch is None or not batch.fits(item, self.parameters)
            if leader:
                if batch is not None:
                    batch.closed = True
                batch = _Batch()
                self._open[plan_key] = batch
            batch.items.append(item)
            batch.rows += item.rows
            batch.width = max(batch.width, item.width)
            if batch.rows >= self.parameters.max_batch_size:
                batch.closed = True
                self._lock.notify_all()
            if leader:
                deadline = time.monotonic() + self.parameters.batch_timeout_micros / 1e6
                # wait for others only while there are others: a request alone runs at once
                while not batch.closed and time.monotonic() < deadline and self._in_flight > len(batch.items):
                    self._lock.wait(deadline - time.monotonic())
                batch.closed = True
                if self._open.get(plan_key) is batch:
                    del self._open[plan_key]
        if leader:
            self._run_batch(batch, plan, signature)
        else:
            batch.done.wait()
        if item.error is not None:
            raise item.error
        return item.result

    def _run_batch(self, batch: _Batch, plan: _SplitPlan, signature: Signature) -> None:
        try:
            if len(batch.items) == 1:
                only = batch.items[0]
                try:
                    only.result = self._call(signature, only.arrays)
                except BaseException as error:  # handed to the caller's thread
                    only.error = error
                return
            width = batch.width
            padded = [pad_to_width(item.arrays, width) for item in batch.items]
            joined = {name: np.concatenate([p[name] for p in padded]) for name in padded[0]}
            try:
                outputs = self._call(signature, joined)
            except BadRequest:  # someone's inputs were refused: each runs alone and gets its own answer
                for item in batch.items:
                    try:
                        item.result = self._call(signature, item.arrays)
                    except BaseException as error:
                        item.error = error
                return
            with self._lock:
                self.joined_calls += 1
            start = 0
            for item in batch.items:
                own = {name: value[start:start + item.rows] for name, value in outputs.items()}
                width, predicates = _width(item.arrays), predicate_count(own)
                item.result = {name: _cut(value, plan.offsets[name], width, predicates) for name, value in own.items()}
                start += item.rows
        except BaseException as error:
            for item in batch.items:
                if item.result is None and item.error is None:
                    item.error = error
        finally:
            batch.done.set()


__all__: Sequence[str] = ["BatchingParameters", "Batcher", "make_plan", "pad_to_width", "read_batching_parameters"]
