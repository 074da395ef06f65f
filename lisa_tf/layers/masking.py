"""Padding masks: how the layers read a ``[batch, time]`` mask and apply it.

Every layer of this package takes its padding mask as ``[batch, time]``, true (non-zero) on real
tokens, in any dtype: bool (``keras.layers.Embedding(mask_zero=True)``, ``keras.layers.Masking``),
or int/float from a feature pipeline. A mask is applied in one of two ways:

- over the *keys* of a softmax (attention, biaffine arc scores): :func:`mask_logits` gives padded
  keys the logit :data:`MASK_LOGIT`, so they get exactly zero probability;
- over the *positions* of a sequence (BiLSTM and convolution outputs, the selective connection's
  state): :func:`fill_padded_positions` replaces the values at padded positions, by zero or by a
  given tensor.

Both select with ``where`` rather than multiplying by a float mask, so an ``inf`` or ``NaN`` held by
padding is replaced rather than turned into ``NaN`` (``0 · inf``) and passed on.
"""

from __future__ import annotations

import warnings

from keras import ops

#: The logit of a padded key before a softmax: finite (no ``inf − inf`` NaN when a whole row is
#: padding) yet far below any real logit, so ``exp`` gives exactly 0 in float32. Use it on float32
#: logits only: in float16 it rounds to ``-inf``.
MASK_LOGIT = -1e9


def as_bool_mask(mask):
    """A padding mask of any dtype (bool, int, float) as bool (non-zero is true), or None.

    Example:
    ```python
    as_bool_mask(keras.ops.array([[1, 1, 0]]))    # [[True, True, False]]
    ```
    """
    if mask is None:
        return None
    return mask if mask.dtype == "bool" else ops.not_equal(mask, 0)


def _expand(mask, rank, axis):
    """A bool ``[batch, time]`` mask with ``rank - 2`` unit axes inserted at ``axis``."""
    for _ in range(rank - 2):
        mask = ops.expand_dims(mask, axis)
    return mask


def mask_logits(logits, mask):
    """``logits [batch, ..., keys]`` with the padded keys of ``mask [batch, keys]`` set to :data:`MASK_LOGIT`.

    Args:
        logits: float32 tensor whose first axis is the batch and whose last axis is the keys
            (the axis a softmax normalises over), e.g. attention logits ``[B, H, Tq, Tk]`` or
            arc scores ``[B, T(dependent), T(head)]``.
        mask: ``[batch, keys]`` padding mask of any dtype, or None (``logits`` unchanged).

    Returns:
        ``logits`` with ``MASK_LOGIT`` wherever the key is padding.

    Example:
    ```python
    logits = keras.random.normal((2, 4, 5, 5))                      # [B, H, Tq, Tk]
    mask = keras.ops.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], "bool")
    weights = keras.ops.softmax(mask_logits(logits, mask), axis=-1)  # 0 on padded keys
    ```
    """
    mask = as_bool_mask(mask)
    if mask is None:
        return logits
    return ops.where(_expand(mask, len(logits.shape), 1), logits, MASK_LOGIT)


def fill_padded_positions(values, mask, fill=0.0):
    """``values [batch, time, ...]`` with the padded positions of ``mask [batch, time]`` replaced by ``fill``.

    Args:
        values: tensor whose first two axes are batch and time.
        mask: ``[batch, time]`` padding mask of any dtype, or None (``values`` unchanged).
        fill: what padded positions hold instead: a scalar (default zero) or a tensor
            broadcastable to ``values`` (e.g. the previous state, to carry it unchanged). Cast to
            ``values.dtype``.

    Returns:
        A tensor of ``values``' shape and dtype.

    Example:
    ```python
    outputs = keras.random.normal((2, 5, 16))
    mask = keras.ops.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], "bool")
    outputs = fill_padded_positions(outputs, mask)     # zero at the padded positions
    ```
    """
    mask = as_bool_mask(mask)
    if mask is None:
        return values
    return ops.where(_expand(mask, len(values.shape), -1), values, ops.cast(fill, values.dtype))


def masked_softmax(logits, mask):
    """``softmax(mask_logits(logits, mask))`` over the last axis: zero weight on padded keys.

    A batch of one-token sentences has one key, where the softmax is rightly 1; Keras warns about
    a softmax over an axis of size 1 (meant for a mistaken class axis), so that warning is not shown.

    Example:
    ```python
    masked_softmax(keras.random.normal((2, 4, 5, 5)), keras.ops.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]]))
    ```
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="You are using a softmax over axis", category=UserWarning)
        return ops.softmax(mask_logits(logits, mask), axis=-1)
