"""The sense head: each predicate's PropBank roleset (``kill.01``), CoNLL-2009's predicate disambiguation.

A linear softmax over the rolesets of the training data (the ``senses`` vocabulary) reads the encoder's
vector of the predicate token, the same vector the SRL scorer reads for it:

    P(r | predicate p) = softmax(W h_p + b)[r]

and is trained with cross-entropy beside the SRL loss (``model.sense_loss_weight``). A roleset training
never saw (id -1 in the features) adds no loss. Which rolesets a predicate may take (its lemma's in the
frame index, or the ones seen with its word form) is decided when decoding, not here
(:mod:`lisa_tf.decoding.roleset_candidates`), so the head scores every training roleset.

References:
    Hajič et al. 2009, "The CoNLL-2009 Shared Task: Syntactic and Semantic Dependencies in Multiple
    Languages" (predicate disambiguation); Bonial et al. 2014, "PropBank: Semantics of New Predicate Types".
"""

from __future__ import annotations

import keras
import tensorflow as tf

from lisa_tf.models.losses import masked_cross_entropy


@keras.saving.register_keras_serializable(package="lisa_tf")
class SenseHead(keras.layers.Layer):
    """Roleset logits from predicate vectors.

    Args:
        num_senses: rolesets of the training data (``len(Vocabularies.senses)``), at least 1.
        **kwargs: other keyword arguments of ``keras.layers.Layer``.

    Call arguments:
        predicates: float ``[..., d]``, the encoder's vector of each predicate token.

    Returns:
        float32 logits ``[..., num_senses]``.

    Example:
    ```python
    head = SenseHead(3)
    head(tf.zeros([2, 4, 16])).shape  # (2, 4, 3)
    ```
    """

    def __init__(self, num_senses: int, **kwargs):
        super().__init__(**kwargs)
        if num_senses < 1:
            raise ValueError(f"num_senses must be >= 1, found {num_senses}")
        self.num_senses = int(num_senses)
        # The gathered predicate vectors may carry the sentence's Keras mask; it is not theirs, and the
        # logits carry none (compute_mask).
        self.supports_masking = True
        self.classifier = keras.layers.Dense(self.num_senses, dtype="float32", name="roleset_softmax")

    def build(self, input_shape):
        self.classifier.build(input_shape)
        self.built = True

    def call(self, predicates):
        return self.classifier(tf.cast(predicates, tf.float32))

    def compute_mask(self, inputs, mask=None):
        return None

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[:-1]) + (self.num_senses,)

    def get_config(self):
        config = super().get_config()
        config.update(num_senses=self.num_senses)
        return config


def sense_loss(sense_ids, logits, mask, label_smoothing: float = 0.0):
    """Mean cross-entropy of the gold rolesets (float32 scalar) over the predicates where ``mask`` holds
    and the roleset is known (``sense_ids >= 0``); 0 when there is none.

    Args:
        sense_ids: int ``[B, P]`` (sentence layout) or ``[B]`` (predicate layout), -1 = unseen roleset.
        logits: ``sense_ids``' shape + ``[senses]``.
        mask: bool, ``sense_ids``' shape: the real predicates.
        label_smoothing: as the SRL loss's.
    """
    known = tf.logical_and(tf.cast(mask, tf.bool), tf.cast(sense_ids, tf.int32) >= 0)
    return masked_cross_entropy(sense_ids, logits, known, label_smoothing)
