"""Tests of lisa_tf.layers.timing_signal against DeepAtt Eqns 11-12 written out in numpy."""

from __future__ import annotations

import keras
import keras_hub
import numpy as np
import pytest

from lisa_tf.layers.timing_signal import TimingSignal
from tests.layers.conftest import roundtrip


def paper_timing(length, channels):
    """DeepAtt Eqns 11-12 in float64: timing(t, 2i) = sin(t / 10000^(2i/d)), timing(t, 2i+1) = cos(...)."""
    signal = np.zeros((length, channels))
    for t in range(length):
        for i in range(0, channels, 2):
            angle = t / 10000 ** (i / channels)
            signal[t, i] = np.sin(angle)
            if i + 1 < channels:
                signal[t, i + 1] = np.cos(angle)
    return signal


def test_interleave_is_the_paper_equations_and_keras_hub():
    x = np.random.default_rng(0).normal(size=(2, 60, 16)).astype("float32")
    signal = np.asarray(TimingSignal()(x))
    assert signal.shape == (2, 60, 16) and signal.dtype == np.float32
    np.testing.assert_allclose(signal[0], paper_timing(60, 16), atol=2e-5)
    np.testing.assert_array_equal(signal[0], signal[1])
    np.testing.assert_array_equal(signal, np.asarray(keras_hub.layers.SinePositionEncoding()(x)))


def test_concat_layout_is_sines_then_cosines():
    x = np.zeros((1, 30, 8), "float32")
    signal = np.asarray(TimingSignal(layout="concat")(x))[0]
    t = np.arange(30)
    np.testing.assert_allclose(signal[:, 0], np.sin(t), atol=2e-5)  # fastest: timescale 1
    np.testing.assert_allclose(signal[:, 4], np.cos(t), atol=2e-5)
    np.testing.assert_allclose(signal[:, 3], np.sin(t / 1e4), atol=2e-6)  # slowest: max_timescale
    np.testing.assert_allclose(signal[:, 7], np.cos(t / 1e4), atol=2e-6)
    odd = np.asarray(TimingSignal(layout="concat")(np.zeros((1, 5, 9), "float32")))[0]
    assert odd.shape == (5, 9) and np.all(odd[:, 8] == 0)


@pytest.mark.parametrize("layout", ["interleave", "concat"])
def test_signal_of_a_position_does_not_depend_on_padding(layout):
    layer = TimingSignal(layout=layout)
    short = np.asarray(layer(np.zeros((1, 4, 6), "float32")))
    long = np.asarray(layer(np.zeros((1, 11, 6), "float32")))
    np.testing.assert_array_equal(short[0], long[0, :4])
    shifted = np.asarray(layer(np.zeros((1, 4, 6), "float32"), start_index=3))
    np.testing.assert_allclose(shifted[0], long[0, 3:7], atol=1e-6)
    given = np.asarray(layer(np.zeros((2, 3, 6), "float32"), positions=np.array([[0, 1, 2], [5, 6, 7]])))
    np.testing.assert_allclose(given[1], long[0, 5:8], atol=1e-6)


def test_mixed_bfloat16_keeps_float32_accuracy(mixed_policy):
    layer = TimingSignal(dtype=mixed_policy)
    x = keras.ops.zeros((1, 200, 32), dtype=layer.compute_dtype)
    signal = layer(x)
    assert keras.backend.standardize_dtype(signal.dtype) == layer.compute_dtype
    # Only the final cast rounds: bfloat16 keeps 8 significant bits (error <= 2^-8 for |v| <= 1).
    error = np.abs(np.asarray(keras.ops.cast(signal, "float32"))[0] - paper_timing(200, 32))
    assert error.max() <= 2**-8


def test_serialisation_roundtrip():
    layer = TimingSignal(max_wavelength=500.0, min_timescale=2.0, layout="concat", name="timing")
    x = np.zeros((1, 7, 10), "float32")
    clone = roundtrip(layer, x)
    assert clone.layout == "concat" and clone.max_wavelength == 500.0 and clone.min_timescale == 2.0
    np.testing.assert_array_equal(np.asarray(clone(x)), np.asarray(layer(x)))
    with pytest.raises(ValueError, match="layout"):
        TimingSignal(layout="sideways")
