"""BIO tags → labelled spans in-graph (core TensorFlow ops), for exports that answer in spans.

The same reading as :func:`data_pipeline.spans.bio_to_spans` (DeepAtt's rule for invalid sequences):
``B-X`` starts a span; ``I-*`` continues an open span whatever its label (the ``B``'s label covers
the span); ``I-X`` with no open span starts an X span; ``O`` (and padding ``""``) closes. As tensors:

    open_i  = tag_i is B-* or I-*
    start_i = tag_i is B-*  or (tag_i is I-* and not open_{i-1})
    end_i   = open_i and tag_{i+1} is not I-*

The k-th start of a row pairs with its k-th end (spans are contiguous runs that cannot nest).
"""

from __future__ import annotations

import tensorflow as tf

from data_pipeline.graph_masks import masked_rows


def bio_spans(tags, probabilities=None, drop=("V", "C-V")):
    """Spans of every row of BIO tags.

    Args:
        tags: string ``[N, T]`` (``""`` on padding).
        probabilities: optional float ``[N, T]``, the probability of each tag; a span's score is the
            mean over its tokens.
        drop: labels left out (the predicate's own ``V``).

    Returns:
        dict of ragged ``[N, None]`` tensors: ``label`` (string), ``start`` and ``end`` (int32 token
        indices, ``end`` exclusive) and, with ``probabilities``, ``score`` (float32).
    """
    tags = tf.convert_to_tensor(tags, tf.string)
    is_b = tf.strings.regex_full_match(tags, "B-.+")
    is_i = tf.strings.regex_full_match(tags, "I-.+")
    is_open = tf.logical_or(is_b, is_i)
    previous_open = tf.pad(is_open[:, :-1], [[0, 0], [1, 0]])
    next_i = tf.pad(is_i[:, 1:], [[0, 0], [0, 1]])
    starts = tf.logical_or(is_b, tf.logical_and(is_i, tf.logical_not(previous_open)))
    ends = tf.logical_and(is_open, tf.logical_not(next_i))
    positions = tf.broadcast_to(tf.range(tf.shape(tags)[1], dtype=tf.int32)[None, :], tf.shape(tags))
    start = masked_rows(positions, starts)
    end = masked_rows(positions, ends) + 1
    label = tf.strings.substr(masked_rows(tags, starts), 2, -1)
    keep = tf.ones_like(start.flat_values, tf.bool)
    for name in drop:
        keep = tf.logical_and(keep, tf.not_equal(label.flat_values, name))
    keep = start.with_flat_values(keep)
    out = {
        "label": masked_rows(label, keep),
        "start": masked_rows(start, keep),
        "end": masked_rows(end, keep),
    }
    if probabilities is not None:
        probabilities = tf.cast(probabilities, tf.float32)
        cumulative = tf.pad(tf.cumsum(probabilities, axis=1), [[0, 0], [1, 0]])  # [N, T + 1]
        rows = tf.cast(out["start"].value_rowids(), tf.int32)
        total = tf.gather_nd(cumulative, tf.stack([rows, out["end"].flat_values], 1)) - tf.gather_nd(
            cumulative, tf.stack([rows, out["start"].flat_values], 1)
        )
        length = tf.cast(out["end"].flat_values - out["start"].flat_values, tf.float32)
        out["score"] = out["start"].with_flat_values(total / length)
    return out
