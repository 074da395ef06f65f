"""The ``text`` signatures' answer for whole paragraphs: per-sentence outputs regrouped by the text
they came from.

A ``text`` input is split into sentences in-graph (:func:`data_pipeline.tokenizer.sentences_tf`, the
rules ``lisa_tf.load(...).predict(paragraph)`` applies), each sentence is tokenised and labelled on its
own (so no argument crosses a sentence boundary), and :func:`paragraph_layout` lays the sentences of one
text side by side again: the answer keeps one row per input text, as TensorFlow Serving's row format and
its batching expect (every output's first dimension is the request's batch), and every index in it
refers to the whole text:

- tokens are numbered through the text (``lengths`` counts them), character offsets index the text;
- ``heads`` (1-based, 0 = root), ``predicate_positions`` and the argument token spans use those
  numbers;
- ``sentence_starts``/``sentence_ends`` int32 ``[B, N]`` give each sentence's character span (−1 pad),
  ``token_sentences`` ``[B, T]`` and ``predicate_sentences`` ``[B, P]`` the sentence each token and
  each frame belongs to (−1 pad).

Why not one row per sentence: a request of two texts would then answer with a number of rows that
depends on the text, which TensorFlow Serving's row format (``"predictions"``, one per instance) and
its request batching (which splits outputs back along the batch) cannot carry.
"""

from __future__ import annotations

import tensorflow as tf

from data_pipeline.graph_masks import masked

#: Outputs with one value per token [N, T], and those of them that hold token indices (1-based heads).
PER_TOKEN = ("tokens", "token_starts", "token_ends", "predicate_flags", "pos", "upos", "heads", "dep_labels")
#: Outputs with one row per predicate [N, P, ...]; ``predicate_positions`` and the argument token spans hold
#: token indices.
PER_PREDICATE = ("predicate_positions", "argument_roles", "argument_token_starts", "argument_token_ends",
                 "argument_starts", "argument_ends", "argument_scores", "predicate_verbal", "senses", "sense_sources",
                 "sense_names", "argument_descriptions", "argument_function_tags", "argument_vn_roles")
_TOKEN_INDICES = {"heads": 1, "predicate_positions": 0, "argument_token_starts": 0, "argument_token_ends": 0}


def paragraph_layout(answer: dict, rows, starts, ends, count) -> dict:
    """Regroup a sentence-major answer ``[N, ...]`` into one row per text ``[B, ...]``.

    Args:
        answer: the per-sentence outputs (module docstring; ``lengths`` int32 [N] required; character
            offsets already in the text's terms).
        rows, starts, ends: int [N], the text each sentence comes from (non-decreasing) and its
            character span there, as :func:`~data_pipeline.tokenizer.sentences_tf` gives them.
        count: the number of texts ``B``.

    Returns:
        The same outputs in the text layout, plus ``sentence_starts``, ``sentence_ends``,
        ``token_sentences`` and (with predicates) ``predicate_sentences``.
    """
    rows = tf.cast(rows, tf.int32)
    lengths = tf.cast(answer["lengths"], tf.int32)
    sentences = tf.size(lengths)
    before = tf.cumsum(lengths, exclusive=True)
    first_token = before - tf.gather(tf.math.unsorted_segment_min(before, rows, count), rows)  # [N], in its text
    index = tf.range(sentences)
    in_text = index - tf.gather(tf.math.unsorted_segment_min(index, rows, count), rows)  # sentence number in its text

    def per_text(values, per_sentence, default):
        """Flat values in sentence order, ``per_sentence`` of them each → [B, ...] padded with ``default``."""
        split = tf.RaggedTensor.from_row_lengths(values, tf.math.unsorted_segment_sum(per_sentence, rows, count),
                                              validate=False)
        return split.to_tensor(default_value=default)

    def shifted(key, values):
        if key not in _TOKEN_INDICES:
            return values
        offset = tf.reshape(first_token, tf.concat([[-1], tf.ones([tf.rank(values) - 1], tf.int32)], 0))
        return tf.where(values >= _TOKEN_INDICES[key], values + tf.cast(offset, values.dtype), values)

    width = tf.shape(answer["tokens"])[1]
    token_mask = tf.sequence_mask(lengths, width)
    has_predicates = "predicate_positions" in answer
    if has_predicates:
        predicate_mask = answer["predicate_positions"] >= 0
        frames = tf.reduce_sum(tf.cast(predicate_mask, tf.int32), axis=1)
    ones = tf.ones_like(lengths)
    out = {"lengths": tf.math.unsorted_segment_sum(lengths, rows, count),
           "sentence_starts": per_text(tf.cast(starts, tf.int32), ones, -1),
           "sentence_ends": per_text(tf.cast(ends, tf.int32), ones, -1),
           "token_sentences": per_text(masked(tf.broadcast_to(in_text[:, None], tf.shape(token_mask)),
                                                       token_mask), lengths, -1)}
    for key, values in answer.items():
        if key in PER_TOKEN:
            pad = "" if values.dtype == tf.string else -1
            out[key] = per_text(masked(shifted(key, values), token_mask), lengths,
                                tf.constant(pad if key != "predicate_flags" else 0, values.dtype))
        elif key in PER_PREDICATE:
            pad = "" if values.dtype == tf.string else (0.0 if values.dtype.is_floating else -1)
            out[key] = per_text(masked(shifted(key, values), predicate_mask), frames,
                                tf.constant(pad, values.dtype))
    if has_predicates:
        out["predicate_sentences"] = per_text(
            masked(tf.broadcast_to(in_text[:, None], tf.shape(predicate_mask)), predicate_mask), frames, -1)
    return out
