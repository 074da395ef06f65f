"""What every SRL model of the project shares.

A model is a ``keras.Model`` whose ``call`` takes the feature dict of
:mod:`data_pipeline.dataset` and returns a dict of logits. Gold labels travel in the same dict (teacher
forcing needs them inside ``call``), so ``fit`` runs with ``y=None`` and :meth:`SrlModel.compute_loss`
reads the labels from ``x``. Prediction is split in two so ensembles can average probabilities:
``predict_scores(features)`` → float32 probabilities, ``decode_scores(scores, features)`` → tag ids
(argmax, or constrained Viterbi with transition log-probabilities kept in the model's weights).
"""

from __future__ import annotations

from typing import Optional

import keras
import numpy as np
import tensorflow as tf

from lisa_tf.layers.viterbi import bio_start_mask, bio_transition_mask, viterbi_decode


class SrlModel(keras.Model):
    """Base class: decoding and the BIO transition weights.

    Args:
        srl_labels: the BIO tag strings in id order (``Vocabularies.srl.entries``).
        decode: ``argmax`` or ``viterbi``.
    """

    #: ``"predicate"``: one example per (sentence, predicate); ``"sentence"``: all predicates at once.
    layout = "predicate"
    uses_syntax = False
    predicts_predicates = False

    def __init__(self, srl_labels, decode: str = "argmax", **kwargs):
        super().__init__(**kwargs)
        self.srl_labels = list(srl_labels)
        self.decode_mode = decode
        # Log-probabilities of tag transitions (−inf-like for invalid BIO), replaced by
        # set_transitions() with statistics of the training data (LISA §4; DeepAtt §4.1 "Viterbi").
        self.transitions = self.add_weight(
            name="transitions",
            shape=(len(self.srl_labels), len(self.srl_labels)),
            initializer=keras.initializers.Constant(bio_transition_mask(self.srl_labels)),
            trainable=False,
            dtype="float32",
        )
        self.start_transitions = self.add_weight(
            name="start_transitions",
            shape=(len(self.srl_labels),),
            initializer=keras.initializers.Constant(bio_start_mask(self.srl_labels)),
            trainable=False,
            dtype="float32",
        )

    def set_transitions(self, matrix: np.ndarray, start: np.ndarray) -> None:
        """Use these transition and first-tag log-probabilities for Viterbi ([L, L] and [L])."""
        self.transitions.assign(np.asarray(matrix, np.float32))
        self.start_transitions.assign(np.asarray(start, np.float32))

    def build_from_batch(self, batch: Optional[dict] = None) -> None:
        """Create every weight by running one batch (default: :meth:`dummy_batch`) through the model."""
        self(batch if batch is not None else self.dummy_batch(), training=False)
        if getattr(self, "optimizer", None) is not None and not self.optimizer.built:
            self.optimizer.build(self.trainable_variables)

    def train_step(self, data):
        logs = super().train_step(data)
        strategy = tf.distribute.get_strategy()
        if isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy) and strategy.extended._in_multi_worker_mode():
            # Keras reduces multi-worker step outputs with reduce("MEAN", axis=0), which needs a
            # batch axis; give the scalar logs one so they average across workers.
            logs = {name: tf.reshape(value, [1]) for name, value in logs.items()}
        return logs

    def _maybe_symbolic_build(self, iterator=None, data_batch=None):
        # Keras builds a model under tf.distribute by averaging the first distributed batch across
        # replicas, which fails for string/bool features and for uneven splits. The model and its
        # optimiser are built explicitly (build_from_batch) before fit, so there is nothing to build.
        if self.built and all(layer.built for layer in self._flatten_layers()) and (
            self.optimizer is None or self.optimizer.built
        ):
            return
        super()._maybe_symbolic_build(iterator=iterator, data_batch=data_batch)

    def dummy_batch(self) -> dict:
        """A one-sentence, two-token batch with every feature of the model's layout (for building
        a model before loading weights)."""
        zeros = tf.zeros([1, 2], tf.int32)
        batch = {
            "tokens": tf.constant([["a", "b"]]),
            "word_ids": zeros,
            "token_mask": tf.ones([1, 2], tf.bool),
            "length": tf.constant([2], tf.int32),
            "sentence_index": tf.constant([0], tf.int32),
            "predicate_indicator": tf.constant([[1, 0]], tf.int32),
            "pos_ids": zeros,
            "joint_pos_predicate_ids": zeros,
            "heads": tf.constant([[0, 0]], tf.int32),
            "dep_label_ids": zeros,
        }
        if self.layout == "predicate":
            batch.update(predicate_index=tf.constant([0]), predicate_position=tf.constant([0]), srl_tag_ids=zeros)
        else:
            batch.update(
                predicate_positions=tf.constant([[0]]),
                predicate_mask=tf.constant([[True]]),
                num_predicates=tf.constant([1]),
                srl_tag_ids=tf.zeros([1, 1, 2], tf.int32),
            )
        return batch

    def decode_tags(self, probabilities, lengths):
        """Tag ids [..., T] from probabilities [..., T, L]: argmax or constrained Viterbi."""
        probabilities = tf.cast(probabilities, tf.float32)
        if self.decode_mode == "argmax":
            return tf.argmax(probabilities, axis=-1, output_type=tf.int32)
        shape = tf.shape(probabilities)
        flat = tf.reshape(probabilities, tf.concat([[-1], shape[-2:]], 0))
        flat_lengths = tf.reshape(lengths, [-1])
        paths, _ = viterbi_decode(tf.math.log(flat + 1e-12), flat_lengths, self.transitions, self.start_transitions)
        return tf.reshape(paths, shape[:-1])
