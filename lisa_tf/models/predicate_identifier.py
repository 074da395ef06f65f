"""Predicate identification: which tokens are predicates, from the words alone.

LISA and SA find predicates with a joint POS/predicate classifier on one of their own layers (Strubell
et al. 2018, §2.3): a softmax over the labels ``TAG`` and ``TAG:PREDICATE``, a token being a predicate
when its most probable label is a ``:PREDICATE`` one. DeepAtt (Tan et al. 2018) and Selective
Connection (Park 2019) cannot do the same on their own encoder, because that encoder reads the
predicate: every example marks one predicate with the predicate-mask embedding (DeepAtt §3 "Pipeline",
Park 2019 §3.1), so both papers label predicates that are given. These models therefore own a small
tagger that reads the words only and predicts the same joint labels as LISA::

    h = SelfAttentionStack(word(w) + timing)      (K blocks, attention then FFN, no predicate mask)
    p(label_t) = softmax(W h_t + b)                over TAG and TAG:PREDICATE labels
    predicate_t = argmax_label p(label_t) is a :PREDICATE label

It is trained with the run (its cross-entropy is added to the SRL loss, with the SRL loss's label
smoothing) and saved with the model; it shares no weights with the SRL encoder, so the SRL model is the
paper's model whatever the tagger learns. Predicting POS jointly, rather than a bare predicate flag, is
LISA's choice and gives the tagger the syntactic category it mostly decides by.

The tagger is used whenever predicates are not given (``lisa_tf.load(...).predict("text")``, ``evaluate``
without ``--gold-predicates``, the exports' ``text`` and ``all_predicates`` signatures): predicates are
found first, then each one is labelled as an ordinary (sentence, predicate) example.
"""

from __future__ import annotations

from typing import Sequence

import keras
import numpy as np
import tensorflow as tf

from data_pipeline.vocab import PREDICATE_SUFFIX


def joint_label_maps(joint_labels: Sequence[str], pos_labels: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """For each joint POS/predicate label: is it a predicate label, and the id of its POS tag.

    Args:
        joint_labels: ``Vocabularies.joint_pos_predicate.entries`` (``TAG`` or ``TAG:PREDICATE``).
        pos_labels: ``Vocabularies.pos.entries``.

    Returns:
        ``(is_predicate [J] bool, pos_id [J] int32)``.

    Raises:
        ValueError: a joint label whose tag is not in the POS vocabulary (the vocabularies were
            not built from the same data).
    """
    pos_index = {tag: i for i, tag in enumerate(pos_labels)}
    is_predicate = np.zeros(len(joint_labels), bool)
    pos_id = np.zeros(len(joint_labels), np.int32)
    for j, label in enumerate(joint_labels):
        tag = label
        if label.endswith(PREDICATE_SUFFIX):
            is_predicate[j] = True
            tag = label[: -len(PREDICATE_SUFFIX)]
        if tag not in pos_index:
            raise ValueError(
                f"joint POS/predicate label {label!r}: expected its tag {tag!r} in the POS vocabulary "
                f"({len(pos_labels)} tags), found none"
            )
        pos_id[j] = pos_index[tag]
    return is_predicate, pos_id


@keras.saving.register_keras_serializable(package="lisa_tf")
class PredicateIdentifier(keras.layers.Layer):
    """A word-only tagger of joint POS/predicate labels (see the module docstring).

    Like Model Garden's ``BertTokenClassifier(network, …)``, the encoder is handed in: any
    :class:`~lisa_tf.models.backbone.SrlBackbone` built without the predicate indicator.

    Args:
        backbone: the tagger's encoder (``predicate_indicator=False``).
        predicate_label_flags: per joint label, 1.0 if it is a ``TAG:PREDICATE`` label, else 0.0
            (:func:`joint_label_maps`).
        **kwargs: other keyword arguments of ``keras.layers.Layer``.

    Call arguments:
        word_ids: int ``[B, T]``.
        padding_mask: bool ``[B, T]``, True on real tokens.
        training: bool.

    Returns:
        float32 joint-label logits ``[B, T, J]``.

    Example:
    ```python
    backbone = SrlBackbone(vocabulary_size=100, embedding_size=16, hidden_size=32, num_layers=2,
                           num_heads=4, filter_size=64, order="attention_first", predicate_indicator=False)
    tagger = PredicateIdentifier(backbone, predicate_label_flags=[0.0, 1.0, 0.0])
    ids = tf.constant([[5, 7, 9, 0]])
    logits = tagger(ids, padding_mask=ids > 0)       # [1, 4, 3]
    tagger.predicate_probabilities(logits)           # [1, 4]: P(token is a predicate)
    ```

    References:
        Strubell et al. 2018, "Linguistically-Informed Self-Attention for Semantic Role Labeling",
        EMNLP, §2.3 (the joint POS/predicate classifier).
    """

    def __init__(self, backbone, predicate_label_flags: Sequence[float], **kwargs):
        super().__init__(**kwargs)
        if backbone.use_predicate_indicator:
            raise ValueError("the predicate identifier's backbone must not read a predicate indicator "
                             "(build it with predicate_indicator=False)")
        flags = [float(f) for f in predicate_label_flags]
        if not any(flags):
            raise ValueError("predicate_label_flags: expected at least one TAG:PREDICATE label, found none")
        self.backbone = backbone
        self.predicate_label_flags = tuple(flags)
        self.classifier = keras.layers.Dense(len(flags), dtype="float32", name="joint_pos_predicate")
        self.classifier.build((None, None, backbone.hidden_size))
        self.built = True

    def call(self, word_ids, padding_mask=None, training=False):
        encoded = self.backbone(word_ids, None, padding_mask=padding_mask, training=training)
        return self.classifier(encoded["sequence_output"])

    def predicate_probabilities(self, logits):
        """P(token is a predicate) ``[B, T]``: the probability mass of the ``:PREDICATE`` labels."""
        probs = tf.nn.softmax(tf.cast(logits, tf.float32), axis=-1)
        return tf.reduce_sum(probs * tf.constant(self.predicate_label_flags, tf.float32), axis=-1)

    def predicate_flags(self, logits, padding_mask):
        """bool ``[B, T]``: the most probable joint label is a predicate label (LISA §2.3's decision),
        on real tokens only."""
        best = tf.argmax(logits, axis=-1, output_type=tf.int32)
        flags = tf.gather(tf.constant(self.predicate_label_flags, tf.float32), best) > 0.5
        return tf.logical_and(flags, tf.cast(padding_mask, tf.bool))

    def get_config(self):
        config = super().get_config()
        config.update(
            backbone=keras.saving.serialize_keras_object(self.backbone),
            predicate_label_flags=list(self.predicate_label_flags),
        )
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["backbone"] = keras.saving.deserialize_keras_object(config["backbone"])
        return cls(**config)
