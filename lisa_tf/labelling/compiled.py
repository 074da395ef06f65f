"""Inference as compiled TensorFlow functions: one per model, task and options, shape-relaxed.

Keras models called eagerly run every op from Python: labelling EWT test with ``decode_batch`` ran at
~400 tokens/s eagerly and ~1,900 tokens/s as a ``tf.function`` on the same batches (2 CPU cores). A
``tf.function`` is traced once per input signature, so one made per call, or per batch shape, would
spend its time tracing instead: :func:`compiled` makes each function once and keeps it as long as the
model it belongs to lives. Its first call traces it once for every batch and sentence length (each
input's dimensions ``None`` but a feature width), so batches of new lengths run the traced graph;
``reduce_retracing=True`` alone would trace the first batch's shapes, then a relaxed graph again on the
second shape seen, two traces of the whole model and decoder where one does.

Its calls (the first one's tracing included) run without the graph-optimiser passes that leave this
project's graphs as they are (:mod:`lisa_tf.util.graph_passes`).

The function holds its models through weak references: the cache never keeps a model alive (it is a
:class:`weakref.WeakKeyDictionary` on the first model).

Example:

>>> from lisa_tf.labelling.batches import decode_batch
>>> # decode = compiled(decode_batch, [model], inject_parse=False); decode(batch)["srl_tags"]
"""

from __future__ import annotations

import weakref
from typing import Callable, Sequence

import numpy as np
import tensorflow as tf

from lisa_tf.util.graph_passes import without_idle_passes

_CACHE: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _key(function: Callable, models: list, options: dict) -> tuple:
    return function, tuple(id(m) for m in models[1:]), tuple(sorted(options.items()))


def compiled(function: Callable, models: Sequence, **options) -> Callable[[dict], dict]:
    """``function(models, batch, **options)`` as a ``tf.function`` of ``batch`` (a dict of tensors).

    Args:
        function: takes ``(models, batch, **options)`` and returns a dict of tensors; its Python
            control flow may depend on ``options`` (fixed per compiled function), not on tensor values.
        models: the model(s) it runs (an ensemble is several); the first one owns the cache entry.
        **options: hashable keyword arguments, part of the cache key.

    Returns:
        The compiled function; the same object for the same function, models and options.
    """
    models = list(models)
    key = _key(function, models, options)
    per_model = _CACHE.setdefault(models[0], {})
    if key not in per_model:
        references = [weakref.ref(m) for m in models]

        def run(batch):
            return function([reference() for reference in references], batch, **options)

        # No AutoGraph: the control flow is Python's (see above), so converting the decoders' source on
        # every first call only adds to the tracing.
        per_model[key] = _traced_for_any_length(tf.function(run, reduce_retracing=True, autograph=False))
    return per_model[key]


def _any_length(value):
    """The spec of a tensor (or array) with every dimension ``None`` but a feature width (the last one of a
    floating-point tensor of rank 3 or more: word vectors); other values as they are."""
    if isinstance(value, (tf.Tensor, np.ndarray)):
        value = tf.convert_to_tensor(value)
        shape = [None] * value.shape.rank
        if value.dtype.is_floating and len(shape) >= 3:
            shape[-1] = value.shape[-1]
        return tf.TensorSpec(shape, value.dtype)
    return value


def _traced_for_any_length(function):
    """``function`` (a ``tf.function`` of one dict of tensors) whose first call traces it for inputs of
    any length: later calls with the same keys, ranks and dtypes run that graph (a call's shapes are a
    subtype of the relaxed ones). Calls run inside :func:`~lisa_tf.util.graph_passes.without_idle_passes`."""
    first = True

    def call(batch):
        nonlocal first
        with without_idle_passes():
            if first:
                first = False
                function.get_concrete_function(tf.nest.map_structure(_any_length, batch))
            return function(batch)

    call.experimental_get_tracing_count = function.experimental_get_tracing_count
    return call


def trace_count(model) -> int:
    """How many graphs the compiled functions of ``model`` (the first model of theirs) have traced."""
    return sum(function.experimental_get_tracing_count() for function in _CACHE.get(model, {}).values())


__all__ = ["compiled", "trace_count"]
