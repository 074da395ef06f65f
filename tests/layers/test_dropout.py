"""Tests of lisa_tf.layers.dropout: the 16-bit inverted dropout every model uses."""

from __future__ import annotations

import keras
import numpy as np
import pytest
import tensorflow as tf

from lisa_tf.layers.dropout import LEVELS, Dropout, drop_threshold, dropout16, uniform_uint16

UNITS = (1024, 1000)  # a million units: the binomial standard deviation of a drop fraction is < 5e-4


def dropped_fraction(y) -> float:
    return float(np.mean(np.asarray(y, np.float32) == 0.0))


@pytest.mark.parametrize("rate", [0.1, 0.2, 0.5])
def test_drop_fraction_and_scale(rate):
    x = np.ones(UNITS, np.float32)
    y = np.asarray(Dropout(rate, seed=3)(x, training=True))
    p = drop_threshold(rate) / LEVELS
    assert abs(p - rate) <= 0.5 / LEVELS
    sigma = np.sqrt(p * (1 - p) / x.size)
    assert abs(dropped_fraction(y) - p) < 5 * sigma
    kept = y[y != 0]
    np.testing.assert_allclose(kept, 1.0 / (1.0 - p), rtol=1e-6)  # inverted: E[y] = x
    assert abs(y.mean() - 1.0) < 5 * sigma / (1 - p)


def test_units_are_independent():
    """Neighbouring units (the two halves of one 32-bit word, and the next word) are dropped independently:
    both-dropped frequency ≈ p², which would be p if a word's two halves were the same bits."""
    rate = 0.3
    y = np.asarray(Dropout(rate, seed=5)(np.ones(UNITS, np.float32), training=True)).reshape(-1)
    dropped = y == 0
    p = dropped.mean()
    for lag in (1, 2, 3):
        both = np.mean(dropped[:-lag] & dropped[lag:])
        assert abs(both - p * p) < 5 * np.sqrt(p * p * (1 - p * p) / dropped.size), lag


def test_uniform_uint16_is_uniform():
    values = np.asarray(uniform_uint16(tf.constant([200_001]), tf.constant([1, 2]))).astype(np.int64)
    assert values.shape == (200_001,) and values.min() >= 0 and values.max() < LEVELS
    counts = np.bincount(values >> 12, minlength=16)  # 16 equal bins of the 16-bit range
    expected = values.size / 16
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    assert chi2 < 50.0  # chi-square, 15 degrees of freedom: p < 1e-5


def test_identity_outside_training_and_edge_rates():
    x = np.random.default_rng(0).normal(size=(8, 16)).astype(np.float32)
    np.testing.assert_array_equal(Dropout(0.3)(x, training=False), x)
    np.testing.assert_array_equal(Dropout(0.3)(x), x)
    np.testing.assert_array_equal(Dropout(0.0)(x, training=True), x)
    np.testing.assert_array_equal(Dropout(1.0)(x, training=True), np.zeros_like(x))
    with pytest.raises(ValueError, match="rate"):
        drop_threshold(1.5)


def test_seeding():
    x = np.ones((64, 64), np.float32)
    first, second = Dropout(0.5, seed=11), Dropout(0.5, seed=11)
    a1, a2 = np.asarray(first(x, training=True)), np.asarray(first(x, training=True))
    b1 = np.asarray(second(x, training=True))
    assert not np.array_equal(a1, a2)  # the seed generator advances on every call
    np.testing.assert_array_equal(a1, b1)  # the same seed gives the same masks


def test_noise_shape_shares_decisions():
    x = np.ones((32, 10, 16), np.float32)
    y = np.asarray(Dropout(0.5, noise_shape=(None, 1, 16), seed=2)(x, training=True))
    assert (y == y[:, :1, :]).all()  # one decision per (batch, feature), shared over time
    assert 0 < dropped_fraction(y) < 1


def test_gradient_is_the_mask():
    x = tf.constant(np.random.default_rng(1).normal(size=(50, 40)).astype(np.float32))
    seed = tf.constant([4, 9])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = dropout16(x, 0.25, seed)
    grad = tape.gradient(y, x)
    np.testing.assert_allclose(np.asarray(grad) * np.asarray(x), y, rtol=1e-6)  # y = grad ⊙ x
    np.testing.assert_allclose(np.unique(grad), [0.0, LEVELS / (LEVELS - drop_threshold(0.25))], rtol=1e-6)


def test_mixed_precision_and_serialisation(mixed_policy):
    layer = Dropout(0.2, seed=1)
    y = layer(keras.ops.ones((16, 8)), training=True)
    assert y.dtype == mixed_policy.removeprefix("mixed_")
    clone = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(layer))
    assert type(clone) is Dropout and clone.get_config() == layer.get_config()


def test_models_use_it():
    from lisa_tf.layers.sublayers import FeedForward, ResidualNorm
    from lisa_tf.layers.attention import SelfAttention

    ffn = FeedForward(8, 16, relu_dropout=0.1)
    attention = SelfAttention(8, 2, dropout=0.1)
    assert type(ffn.inner_dropout) is Dropout and type(attention.attention_dropout) is Dropout
    assert type(ResidualNorm(ffn, dropout=0.2).residual_dropout) is Dropout
