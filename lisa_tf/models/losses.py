"""Masked token losses in float32.

Every loss here averages over real tokens only: padded positions get weight 0 and never reach the
sum or the denominator. Logits are cast to float32 first, whatever the mixed-precision policy.
"""

from __future__ import annotations

import keras
import tensorflow as tf


def masked_cross_entropy(labels, logits, mask, label_smoothing: float = 0.0):
    """Mean softmax cross-entropy over the positions where ``mask`` is true.

    Args:
        labels: int class ids, any shape S (values at masked positions are ignored, may be -1).
        logits: shape S + [classes].
        mask: bool or 0/1, shape S.
        label_smoothing: spread this much probability uniformly over the classes (Szegedy et al. 2016),
            0.1 in DeepAtt and LISA.

    Returns:
        float32 scalar; 0 when the mask is empty.
    """
    logits = tf.cast(logits, tf.float32)
    weights = tf.cast(mask, tf.float32)
    safe_labels = tf.where(tf.cast(mask, tf.bool), tf.cast(labels, tf.int32), 0)
    targets = tf.one_hot(safe_labels, tf.shape(logits)[-1], dtype=tf.float32)
    per_token = keras.losses.categorical_crossentropy(
        targets, logits, from_logits=True, label_smoothing=label_smoothing
    )
    return tf.math.divide_no_nan(tf.reduce_sum(per_token * weights), tf.reduce_sum(weights))


def per_replica(loss):
    """Scale a per-replica mean loss for ``tf.distribute``: gradients are summed over replicas, so each
    replica contributes ``loss / replicas`` (what Keras does for its own ``Loss`` objects)."""
    replicas = tf.distribute.get_strategy().num_replicas_in_sync
    return loss if replicas == 1 else loss / tf.cast(replicas, loss.dtype)
