"""Inference runs compiled functions that are traced once, not per batch shape (lisa_tf/labelling/compiled.py)."""

from __future__ import annotations

import lisa_tf
from lisa_tf.labelling.batches import decode_batch
from lisa_tf.labelling.compiled import compiled, trace_count


def test_labelling_sentences_of_fifty_new_lengths_adds_no_trace(lisa_run):
    predictor = lisa_tf.load(lisa_run, max_sentence_tokens=100)  # the tiny run's longest sentence is shorter
    model = predictor.model
    words = "the company said it expects growth in its markets next year".split()

    def sentences(lengths):
        return [(words * 20)[:n] for n in lengths]

    for lengths in ([3], [7, 8], [12, 2, 5]):  # warm-up: a few batch shapes
        predictor.predict(tokens=sentences(lengths))
    traced = trace_count(model)
    assert traced >= 1
    for n in range(14, 64):  # 50 lengths not seen in warm-up, alone and in batches of mixed lengths
        predictor.predict(tokens=sentences([n]))
        predictor.predict(tokens=sentences([n, n // 2, 1]))
    assert trace_count(model) == traced


def test_one_compiled_function_per_model_and_options(lisa_run, deepatt_run):
    lisa, deepatt = lisa_tf.load(lisa_run).model, lisa_tf.load(deepatt_run).model
    first = compiled(decode_batch, [lisa], inject_parse=False)
    assert compiled(decode_batch, [lisa], inject_parse=False) is first
    assert compiled(decode_batch, [lisa], inject_parse=True) is not first
    assert compiled(decode_batch, [deepatt]) is not compiled(decode_batch, [lisa])


def test_the_first_batch_traces_a_graph_for_every_length(lisa_run):
    """One trace serves batches of other sizes and lengths from the start: ``reduce_retracing`` alone traced
    the first batch's shapes, then the whole model and decoder again for the second shape."""
    predictor = lisa_tf.load(lisa_run, max_sentence_tokens=100)
    words = "the company said it expects growth in its markets next year".split()
    predictor.predict(tokens=[words[:4]])
    assert trace_count(predictor.model) == 1
    predictor.predict(tokens=[words[:9], words[:2], words])
    assert trace_count(predictor.model) == 1
