"""The two dependency-head conventions of the project, and the only code that converts between them.

* **CoNLL-U** (readers, writers, the REST ``parse_heads`` field, every user-facing output): 1-based
  head of each token, ``0`` = the root.
* **Self-loop** (LISA's syntax head, Strubell et al. 2018 §2.2): 0-based index of the token each
  token attends to; the root attends to itself, so every row of the attention is a distribution over
  real tokens.

Both functions take and return int tensors of any shape ``[..., T]`` (NumPy arrays and lists are
converted), so the same code serves the in-graph preprocessor and export and the Python-side decoding
of predictions.
"""

from __future__ import annotations

import tensorflow as tf


def _positions(heads):
    shape = tf.shape(heads)
    return tf.broadcast_to(tf.range(shape[-1], dtype=heads.dtype), shape)


def to_self_loop(heads, mask=None):
    """CoNLL-U heads (1-based, 0 = root) → self-loop heads (0-based, root = its own index).

    Args:
        heads: int tensor ``[..., T]``.
        mask: optional bool ``[..., T]``, True on real tokens; padded entries become 0.

    Returns:
        int32 tensor of the same shape.
    """
    heads = tf.cast(heads, tf.int32)
    loops = tf.where(heads > 0, heads - 1, _positions(heads))
    return loops if mask is None else tf.where(tf.cast(mask, tf.bool), loops, 0)


def to_conllu(heads, mask=None, pad: int = -1):
    """Self-loop heads (0-based, root = its own index) → CoNLL-U heads (1-based, 0 = root).

    Args:
        heads: int tensor ``[..., T]``.
        mask: optional bool ``[..., T]``, True on real tokens; padded entries become ``pad``.
        pad: the value on padding (−1, as the REST ``parse_heads`` field uses).

    Returns:
        int32 tensor of the same shape.
    """
    heads = tf.cast(heads, tf.int32)
    conllu = tf.where(tf.equal(heads, _positions(heads)), 0, heads + 1)
    return conllu if mask is None else tf.where(tf.cast(mask, tf.bool), conllu, pad)
