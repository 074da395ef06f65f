"""The one place where model features are built from tokens, in-graph.

Training (``tf.data`` maps it over padded batches), evaluation, prediction and every export call the
same :class:`SrlPreprocessor`; the models are built on its output. What the reader-side pipeline
(:mod:`data_pipeline.dataset`) adds are only the *labels* (BIO tag ids, POS, dependency labels).
"""

from __future__ import annotations

from typing import Sequence

import keras
import numpy as np
import tensorflow as tf

from data_pipeline.vocab import OOV, PAD, PAD_ID

from lisa_tf.decoding.head_indices import to_self_loop

#: ``"predicate"``: one example per (sentence, predicate); ``"sentence"``: all predicates at once.
LAYOUTS = ("predicate", "sentence")


@keras.saving.register_keras_serializable(package="lisa_tf")
class SrlPreprocessor(keras.layers.Layer):
    """Tokens (+ predicates, + a parse) → the features every SRL model of the project reads.

    Words are lower-cased (UTF-8, as the word vocabulary and GloVe 6B are) and looked up in a
    ``keras.layers.StringLookup`` the layer owns: id 0 is padding (``""``), id 1 is out-of-vocabulary
    (``"<unk>"``), the training words follow, so the ids equal :class:`data_pipeline.vocab.Vocabulary`
    indices. The table is saved with the layer (the word list is part of its config, and the lookup
    layer writes it as an asset of a ``.keras`` file).

    Args:
        words: the word vocabulary in id order (``Vocabularies.words.entries``: ``""``, ``"<unk>"``,
            then the training words).
        layout: ``"predicate"`` or ``"sentence"`` (see :data:`LAYOUTS`).
        **kwargs: other keyword arguments of ``keras.layers.Layer``.

    Call arguments:
        inputs: a dict with

            * ``tokens``: string ``[B, T]`` padded with ``""``, or a ``tf.RaggedTensor`` ``[B, None]``;
            * ``length`` (optional): int ``[B]``; default: the ragged row lengths, else the count of
              non-empty tokens;
            * predicate layout: ``predicate_position`` int ``[B]``, the predicate's token index
              (without it the predicate indicator is all 0: features for predicate identification);
            * sentence layout (optional): ``predicate_positions`` int ``[B, P]`` and
              ``num_predicates`` ``[B]`` (gold predicates: the predicate indicator and mask);
            * ``parse_heads`` (optional): int ``[B, T]`` CoNLL-U heads (1-based, 0 = root);

            every other entry (labels) is passed through unchanged.

    Returns:
        The input dict plus ``tokens`` (dense), ``word_ids`` int32 ``[B, T]``, ``token_mask`` bool
        ``[B, T]``, ``length`` int32 ``[B]``, ``predicate_indicator`` int32 ``[B, T]``;
        ``predicate_mask`` bool ``[B, P]`` with ``predicate_positions``; ``heads`` int32 ``[B, T]``
        (self-loop convention, :mod:`lisa_tf.decoding.head_indices`) with ``parse_heads``.

    Example:
    ```python
    preprocessor = SrlPreprocessor(["", "<unk>", "the", "cat", "sat"], layout="predicate")
    features = preprocessor({"tokens": tf.ragged.constant([["The", "cat", "sat", "."]]),
                             "predicate_position": tf.constant([2])})
    features["word_ids"]             # [[2, 3, 4, 1]]
    features["predicate_indicator"]  # [[0, 0, 1, 0]]
    ```
    """

    def __init__(self, words: Sequence[str], layout: str = "predicate", **kwargs):
        kwargs.setdefault("trainable", False)
        super().__init__(**kwargs)
        words = list(words)
        if words[:2] != [PAD, OOV]:
            raise ValueError(f"words must start with the padding {PAD!r} and OOV {OOV!r} entries, found {words[:2]}")
        if layout not in LAYOUTS:
            raise ValueError(f"layout must be one of {list(LAYOUTS)}, found {layout!r}")
        # Held past Keras' attribute tracking, which walks every row of a list (as lisa_tf.models.base does),
        # and given to the lookup as an array, which it keeps as it is.
        object.__setattr__(self, "words", words)
        self.layout = layout
        self.lookup = keras.layers.StringLookup(
            vocabulary=np.array(words[2:], dtype=object), mask_token=PAD, oov_token=OOV, num_oov_indices=1,
            name="word_lookup")

    def call(self, inputs):
        features = dict(inputs)
        tokens = features["tokens"]
        if isinstance(tokens, tf.RaggedTensor):
            length = tf.cast(tokens.row_lengths(), tf.int32)
            tokens = tokens.to_tensor(default_value=PAD)
        elif "length" in features:
            length = tf.cast(features["length"], tf.int32)
        else:
            length = tf.reduce_sum(tf.cast(tf.not_equal(tokens, PAD), tf.int32), axis=1)
        time = tf.shape(tokens)[1]
        mask = tf.sequence_mask(length, time)
        lower = tf.strings.lower(tokens, encoding="utf-8")
        word_ids = tf.where(mask, tf.cast(self.lookup(lower), tf.int32), PAD_ID)
        features.update(tokens=tokens, word_ids=word_ids, token_mask=mask, length=length)
        if self.layout == "predicate" and "predicate_position" in features:
            position = tf.cast(features["predicate_position"], tf.int32)
            features["predicate_indicator"] = tf.one_hot(position, time, dtype=tf.int32)
        elif "predicate_positions" in features:
            positions = tf.cast(features["predicate_positions"], tf.int32)
            count = tf.cast(features["num_predicates"], tf.int32)
            predicate_mask = tf.sequence_mask(count, tf.shape(positions)[1])
            features["predicate_mask"] = predicate_mask
            hits = tf.one_hot(positions, time, dtype=tf.int32) * tf.cast(predicate_mask, tf.int32)[:, :, None]
            features["predicate_indicator"] = tf.minimum(tf.reduce_sum(hits, axis=1), 1)
        else:
            features["predicate_indicator"] = tf.zeros_like(word_ids)
        if "parse_heads" in features:
            features["heads"] = to_self_loop(features["parse_heads"], mask)
        return features

    def get_config(self):
        config = super().get_config()
        config.update(words=list(self.words), layout=self.layout)
        return config
