"""Tests of lisa_tf.layers.scalar_mix against ELMo's Eqn 1 written out in numpy."""

from __future__ import annotations

import keras
import numpy as np
import pytest
import tensorflow as tf

from lisa_tf.layers.scalar_mix import ScalarMix
from tests.layers.conftest import roundtrip


def by_hand(layers, w, gamma, axis=-2):
    """γ · Σ_k softmax(w)_k · h_k, one layer at a time."""
    s = np.exp(w - np.max(w))
    s = s / s.sum()
    stacked = np.moveaxis(layers, axis, 0)
    return gamma * sum(s[k] * stacked[k] for k in range(len(w)))


def test_equals_the_weighted_sum_by_hand():
    layers = np.random.default_rng(0).normal(size=(2, 5, 7, 12)).astype("float32")
    mix = ScalarMix(7)
    out = np.asarray(mix(layers))
    assert out.shape == (2, 5, 12) and out.dtype == np.float32
    np.testing.assert_allclose(out, layers.mean(axis=2), atol=1e-6)  # w = 0, γ = 1: the mean
    w = np.array([0.5, -1.0, 2.0, 0.0, 0.3, -0.2, 1.1], "float32")
    mix.layer_weights.assign(w)
    mix.gamma.assign(1.7)
    np.testing.assert_allclose(np.asarray(mix(layers)), by_hand(layers, w, 1.7), atol=1e-5)
    np.testing.assert_allclose(np.asarray(mix.mixing_weights()).sum(), 1.0, atol=1e-6)


def test_layer_axis_can_be_anywhere():
    layers = np.random.default_rng(1).normal(size=(3, 2, 4, 6)).astype("float32")  # [layers, B, T, d]
    w = np.array([1.0, -1.0, 0.25], "float32")
    mix = ScalarMix(3, axis=0, initial_weights=w.tolist())
    np.testing.assert_allclose(np.asarray(mix(layers)), by_hand(layers, w, 1.0, axis=0), atol=1e-5)
    assert mix.compute_output_shape((3, 2, 4, 6)) == (2, 4, 6)


def test_mask_is_passed_on_and_padding_does_not_touch_real_tokens():
    rng = np.random.default_rng(2)
    layers = rng.normal(size=(1, 4, 3, 5)).astype("float32")
    mask = np.array([[True, True, False, False]])
    mix = ScalarMix(3, initial_weights=[0.1, 0.2, 0.3])
    assert np.array_equal(np.asarray(mix.compute_mask(layers, mask)), mask)
    padded = layers.copy()
    padded[:, 2:] = rng.normal(size=(1, 2, 3, 5))
    np.testing.assert_array_equal(np.asarray(mix(layers, mask=mask))[:, :2], np.asarray(mix(padded, mask=mask))[:, :2])


def test_wrong_layer_count_and_arguments_are_errors():
    with pytest.raises(ValueError, match="expected 3 layers"):
        ScalarMix(3)(np.zeros((1, 2, 4, 5), "float32"))
    with pytest.raises(ValueError, match="initial_weights"):
        ScalarMix(3, initial_weights=[0.0])


def test_weights_train_and_frozen_weights_do_not(mixed_policy):
    layers = tf.constant(np.random.default_rng(3).normal(size=(2, 3, 4, 5)), tf.float32)
    mix = ScalarMix(4)
    assert len(mix.trainable_weights) == 2
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.cast(mix(layers), tf.float32) * tf.cast(layers[:, :, 2], tf.float32))
    grads = tape.gradient(loss, mix.trainable_weights)
    assert all(g is not None and np.any(np.asarray(g) != 0) for g in grads)
    assert mix(layers).dtype == keras.backend.standardize_dtype(mixed_policy.split("_")[1])
    assert len(ScalarMix(4, learn_weights=False).trainable_weights) == 1  # γ only


def test_get_config_round_trip():
    layers = np.random.default_rng(4).normal(size=(2, 3, 4, 5)).astype("float32")
    mix = ScalarMix(4, initial_weights=[0.0, 1.0, 2.0, 3.0], learn_weights=False, name="mix")
    mix.gamma.assign(0.5)
    clone = roundtrip(mix, layers)
    np.testing.assert_array_equal(np.asarray(clone(layers)), np.asarray(mix(layers)))
    assert clone.get_config()["initial_weights"] == [0.0, 1.0, 2.0, 3.0]
