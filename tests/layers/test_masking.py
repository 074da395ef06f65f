"""Tests of lisa_tf.layers.masking: mask dtypes, masked logits, filled padded positions."""

from __future__ import annotations

import keras
import numpy as np
import pytest

from lisa_tf.layers.masking import MASK_LOGIT, as_bool_mask, fill_padded_positions, mask_logits, masked_softmax

MASK = np.array([[1, 1, 1, 0], [1, 1, 1, 1]], bool)


@pytest.mark.parametrize("dtype", ["bool", "int32", "float32"])
def test_as_bool_mask_accepts_any_dtype(dtype):
    np.testing.assert_array_equal(np.asarray(as_bool_mask(keras.ops.cast(MASK, dtype))), MASK)
    assert as_bool_mask(None) is None


@pytest.mark.parametrize("shape", [(2, 4), (2, 3, 4), (2, 5, 3, 4)], ids=["rank2", "rank3", "rank4"])
def test_mask_logits_masks_the_last_axis_by_batch(shape):
    logits = np.random.default_rng(0).normal(size=shape).astype("float32")
    masked = np.asarray(mask_logits(logits, MASK.astype("int32")))
    keys = MASK.reshape((2,) + (1,) * (len(shape) - 2) + (4,))
    np.testing.assert_array_equal(masked, np.where(keys, logits, MASK_LOGIT))
    weights = np.asarray(keras.ops.softmax(masked, axis=-1))
    assert np.all(weights[0, ..., 3] == 0.0)
    assert mask_logits(logits, None) is logits


def test_fill_padded_positions_replaces_non_finite_padding():
    values = np.ones((2, 4, 3), "float32")
    values[0, 3] = [np.nan, np.inf, -np.inf]
    zeroed = np.asarray(fill_padded_positions(values, MASK))
    np.testing.assert_array_equal(zeroed, np.where(MASK[..., None], values, 0.0))
    previous = np.full((2, 4, 3), 7.0, "float32")
    carried = np.asarray(fill_padded_positions(values, MASK.astype("float32"), fill=previous))
    np.testing.assert_array_equal(carried, np.where(MASK[..., None], values, 7.0))
    assert fill_padded_positions(values, None) is values


def test_fill_padded_positions_keeps_the_dtype_and_rank_two_values():
    values = keras.ops.ones((2, 4), "bfloat16")
    filled = fill_padded_positions(values, MASK, fill=-1.0)
    assert keras.backend.standardize_dtype(filled.dtype) == "bfloat16"
    np.testing.assert_array_equal(np.asarray(keras.ops.cast(filled, "float32")), np.where(MASK, 1.0, -1.0))


def test_attention_over_one_token_sentences_is_one_without_a_warning():
    """A batch of one-token sentences has one key: the weight is exactly 1, and Keras' warning about
    a softmax over an axis of size 1 (meant for a mistaken class axis) is not shown."""
    import warnings

    from lisa_tf.layers.attention import SelfAttention

    layer = SelfAttention(hidden_size=8, num_heads=2)
    inputs = keras.random.normal((3, 1, 8), seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _, weights = layer(inputs, mask=keras.ops.ones((3, 1), "bool"), return_attention_scores=True)
        direct = masked_softmax(keras.random.normal((3, 2, 1, 1)), keras.ops.ones((3, 1)))
    np.testing.assert_array_equal(keras.ops.convert_to_numpy(weights), np.ones((3, 2, 1, 1), "float32"))
    np.testing.assert_array_equal(keras.ops.convert_to_numpy(direct), np.ones((3, 2, 1, 1), "float32"))
