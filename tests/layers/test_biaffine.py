"""Tests of lisa_tf.layers.biaffine: LISA Eqns 4-6 in numpy, masking, pairing modes, serialisation."""

from __future__ import annotations

import keras
import numpy as np
import pytest

from lisa_tf.layers.biaffine import BiaffineArcScorer, BilinearLabelScorer
from tests.layers.conftest import roundtrip

RNG = np.random.default_rng(11)
X = RNG.normal(size=(2, 5, 6)).astype("float32")
MASK = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], bool)


def leaky(v):
    return np.where(v > 0, v, 0.2 * v)


def test_arc_scores_are_eqn_4_with_padded_heads_masked():
    scorer = BiaffineArcScorer(mlp_dim=4, bilinear_initializer="glorot_uniform")
    logits = np.asarray(scorer(X, mask=MASK))
    assert logits.shape == (2, 5, 5) and logits.dtype == np.float32
    q = leaky(X @ np.asarray(scorer.dependent_mlp.kernel) + np.asarray(scorer.dependent_mlp.bias))
    k = leaky(X @ np.asarray(scorer.head_mlp.kernel) + np.asarray(scorer.head_mlp.bias))
    u, bias = np.asarray(scorer.bilinear), np.asarray(scorer.head_bias)
    expected = q @ u @ np.swapaxes(k, 1, 2) + (k @ bias)[:, None, :]
    np.testing.assert_allclose(logits[1], expected[1], atol=1e-5)
    np.testing.assert_allclose(logits[0][:, :3], expected[0][:, :3], atol=1e-5)
    probabilities = np.asarray(keras.ops.softmax(logits, axis=-1))
    assert np.all(probabilities[0, :, 3:] == 0.0)  # padded heads never in a denominator
    np.testing.assert_allclose(probabilities.sum(-1), 1.0, atol=1e-6)


def test_arc_scores_ignore_padding_values_and_start_uniform():
    scorer = BiaffineArcScorer(mlp_dim=4, bilinear_initializer="glorot_uniform")
    noisy = X.copy()
    noisy[0, 3:] = 50.0
    a, b = np.asarray(scorer(X, mask=MASK)), np.asarray(scorer(noisy, mask=MASK))
    np.testing.assert_allclose(a[0, :3, :3], b[0, :3, :3], atol=1e-5)
    fresh = BiaffineArcScorer(mlp_dim=4)  # zero-initialised U: A_parse starts uniform over real tokens
    probabilities = np.asarray(keras.ops.softmax(fresh(X, mask=MASK), axis=-1))
    np.testing.assert_allclose(probabilities[0, :, :3], 1 / 3, atol=1e-6)


def test_label_scores_are_bilinear_plus_linear():
    scorer = BilinearLabelScorer(num_labels=3, bilinear_initializer="glorot_uniform")
    heads = np.array([[1, 1, 1, 0, 0], [0, 0, 4, 2, 2]])
    head_vectors = np.take_along_axis(X, heads[..., None], axis=1)
    scores = np.asarray(scorer(X, head_vectors))
    assert scores.shape == (2, 5, 3) and scores.dtype == np.float32
    u = np.asarray(scorer.bilinear)  # [labels, 6, 6]
    wa, wb, b = np.asarray(scorer.left_linear), np.asarray(scorer.right_linear), np.asarray(scorer.bias)
    expected = np.einsum("bti,lij,btj->btl", X, u, head_vectors) + X @ wa + head_vectors @ wb + b
    np.testing.assert_allclose(scores, expected, atol=1e-4)


def test_all_pairs_equals_aligned_pairs():
    roles = BilinearLabelScorer(num_labels=4, mlp_dim=3, all_pairs=True, bilinear_initializer="glorot_uniform")
    predicates = X[:, [0, 2]]  # gathered predicate vectors, P = 2
    scores = np.asarray(roles(predicates, X))
    assert scores.shape == (2, 2, 5, 4)
    aligned = BilinearLabelScorer.from_config({**roles.get_config(), "all_pairs": False})
    aligned(predicates[:, :, None, :].repeat(5, 2), X[:, None].repeat(2, 1))
    aligned.set_weights(roles.get_weights())
    pairwise = np.asarray(aligned(predicates[:, :, None, :].repeat(5, 2), X[:, None].repeat(2, 1)))
    np.testing.assert_allclose(scores, pairwise, atol=1e-5)
    every_token = np.asarray(roles(X, X))  # Eqn 6 with every token as a candidate predicate
    np.testing.assert_allclose(every_token[:, [0, 2]], scores, atol=1e-5)


@pytest.mark.parametrize(
    "make, inputs",
    [
        (lambda: BiaffineArcScorer(mlp_dim=4, activation="relu", dropout=0.1, use_head_bias=False), (X,)),
        (lambda: BilinearLabelScorer(5, mlp_dim=3, dropout=0.2, all_pairs=True, use_bias=False), (X, X)),
        (lambda: BilinearLabelScorer(5), (X, X)),
    ],
    ids=["arcs", "roles", "labels"],
)
def test_serialisation_roundtrip(make, inputs):
    layer = make()
    layer(*inputs)
    clone = roundtrip(layer, *inputs)
    np.testing.assert_array_equal(np.asarray(clone(*inputs)), np.asarray(layer(*inputs)))


def test_mixed_precision(mixed_policy):
    arcs = BiaffineArcScorer(mlp_dim=4, bilinear_initializer="glorot_uniform")
    roles = BilinearLabelScorer(num_labels=3, mlp_dim=4, all_pairs=True, bilinear_initializer="glorot_uniform")
    logits = arcs(X, mask=MASK)
    scores = roles(X, X)
    assert logits.dtype == "float32" and scores.dtype == "float32"
    assert arcs.dependent_mlp.compute_dtype != "float32"
    probabilities = np.asarray(keras.ops.softmax(logits, axis=-1))
    assert np.all(np.isfinite(probabilities)) and np.all(probabilities[0, :, 3:] == 0.0)
    assert np.all(np.isfinite(np.asarray(scores)))
