"""Tests of lisa_tf.layers.initializers.clone_initializer."""

from __future__ import annotations

import keras
import numpy as np

from lisa_tf.layers.initializers import clone_initializer


def test_unseeded_copies_draw_different_values():
    original = keras.initializers.Orthogonal()
    first, second = clone_initializer(original), clone_initializer(original)
    assert type(first) is keras.initializers.Orthogonal and first is not original
    assert not np.allclose(np.asarray(first((4, 4))), np.asarray(second((4, 4))))


def test_seeded_copies_are_reproducible_and_offsets_differ():
    seeded = keras.initializers.RandomNormal(stddev=0.5, seed=3)
    same = np.asarray(clone_initializer(seeded)((4, 4)))
    np.testing.assert_array_equal(same, np.asarray(seeded((4, 4))))
    shifted = clone_initializer(seeded, seed_offset=2)
    assert shifted.get_config() == {**seeded.get_config(), "seed": 5}
    expected = keras.initializers.RandomNormal(stddev=0.5, seed=5)((4, 4))
    np.testing.assert_array_equal(np.asarray(shifted((4, 4))), np.asarray(expected))
    assert not np.allclose(np.asarray(shifted((4, 4))), same)


def test_names_and_seedless_initializers():
    assert type(clone_initializer("orthogonal")) is keras.initializers.Orthogonal
    zeros = clone_initializer("zeros", seed_offset=4)
    assert type(zeros) is keras.initializers.Zeros
    np.testing.assert_array_equal(np.asarray(zeros((2,))), [0.0, 0.0])
