"""Tests of lisa_tf.layers.attention.SelfAttention: equations, masking, the replaceable head."""

from __future__ import annotations

import keras
import numpy as np
import pytest
import tensorflow as tf

from lisa_tf.layers.attention import SelfAttention
from lisa_tf.layers.sublayers import ResidualNorm
from tests.layers.conftest import roundtrip

RNG = np.random.default_rng(7)
X = RNG.normal(size=(2, 5, 8)).astype("float32")
MASK = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], bool)


def reference(layer, x, mask, override=None):
    """DeepAtt Eqns 1-4 in numpy from the layer's own kernels (and biases, with use_bias=True)."""
    dense = (layer.query_dense, layer.key_dense, layer.value_dense, layer.output_dense)
    wq, wk, wv, wo = (np.asarray(d.kernel) for d in dense)
    bq, bk, bv, bo = (np.asarray(d.bias) if layer.use_bias else np.zeros(d.kernel.shape[1], "float32") for d in dense)
    h, dk = layer.num_heads, layer.key_dim
    heads, weights = [], []
    for i in range(h):
        part = slice(i * dk, (i + 1) * dk)
        q, k, v = x @ wq[:, part] + bq[part], x @ wk[:, part] + bk[part], x @ wv[:, part] + bv[part]
        logits = q @ np.swapaxes(k, 1, 2) / np.sqrt(dk)
        logits = np.where(mask[:, None, :], logits, -np.inf)
        a = np.exp(logits - logits.max(-1, keepdims=True))
        a /= a.sum(-1, keepdims=True)
        if override is not None and override[0] == i:
            a = override[1]
        weights.append(a)
        heads.append(a @ v)
    return np.concatenate(heads, -1) @ wo + bo, np.stack(weights, 1)


def test_equations_shapes_and_masked_keys():
    layer = SelfAttention(hidden_size=8, num_heads=2)
    out, weights = layer(X, mask=MASK, return_attention_scores=True)
    assert out.shape == (2, 5, 8) and weights.shape == (2, 2, 5, 5) and weights.dtype == tf.float32
    expected_out, expected_weights = reference(layer, X, MASK)
    np.testing.assert_allclose(np.asarray(weights), expected_weights, atol=1e-6)
    np.testing.assert_allclose(np.asarray(out)[MASK], expected_out[MASK], atol=1e-5)
    assert np.all(np.asarray(weights)[0, :, :, 3:] == 0.0)  # padded keys get exactly zero weight
    np.testing.assert_allclose(np.asarray(weights).sum(-1), 1.0, atol=1e-6)


def test_equations_with_biases():
    """LISA's projections have biases (footnote 2); the query bias is scaled by d_k^-0.5 with its kernel."""
    layer = SelfAttention(hidden_size=8, num_heads=2, use_bias=True)
    layer.build(X.shape)
    for dense in (layer.query_dense, layer.key_dense, layer.value_dense, layer.output_dense):
        dense.bias.assign(RNG.normal(size=dense.bias.shape).astype("float32"))
    out, weights = layer(X, mask=MASK, return_attention_scores=True)
    expected_out, expected_weights = reference(layer, X, MASK)
    np.testing.assert_allclose(np.asarray(weights), expected_weights, atol=1e-5)
    np.testing.assert_allclose(np.asarray(out)[MASK], expected_out[MASK], atol=1e-5)


def test_padded_tokens_do_not_change_real_outputs():
    layer = SelfAttention(hidden_size=8, num_heads=2, use_bias=True)
    changed = X.copy()
    changed[0, 3:] = 1e3 * RNG.normal(size=(2, 8))
    a = np.asarray(layer(X, mask=MASK))
    b = np.asarray(layer(changed, mask=MASK))
    np.testing.assert_allclose(a[MASK], b[MASK], atol=1e-5)
    # Integer masks (as from a feature dict) mean the same.
    np.testing.assert_array_equal(np.asarray(layer(X, mask=MASK.astype("int32"))), a)


def test_fully_padded_row_is_finite():
    layer = SelfAttention(hidden_size=8, num_heads=2)
    mask = np.array([[0, 0, 0, 0, 0], [1, 1, 0, 0, 0]], bool)
    out, weights = layer(X, mask=mask, return_attention_scores=True)
    assert np.all(np.isfinite(np.asarray(out))) and np.all(np.isfinite(np.asarray(weights)))


def test_head_override_replaces_exactly_one_head():
    layer = SelfAttention(hidden_size=8, num_heads=2)
    heads = np.array([[1, 1, 2, 0, 0], [0, 0, 4, 2, 2]])  # each token's parent; root = self-loop
    parse = np.eye(5, dtype="float32")[heads]
    plain_out, plain = layer(X, mask=MASK, return_attention_scores=True)
    out, weights = layer(X, mask=MASK, head_override=parse, head_override_index=1, return_attention_scores=True)
    np.testing.assert_array_equal(np.asarray(weights)[:, 1], parse)
    np.testing.assert_array_equal(np.asarray(weights)[:, 0], np.asarray(plain)[:, 0])
    assert not np.allclose(np.asarray(out), np.asarray(plain_out), atol=1e-4)
    expected_out, _ = reference(layer, X, MASK, override=(1, parse))
    np.testing.assert_allclose(np.asarray(out)[MASK], expected_out[MASK], atol=1e-5)
    with pytest.raises(ValueError, match="head_override_index"):
        layer(X, mask=MASK, head_override=parse, head_override_index=2)


def test_head_override_index_as_tensor_in_tf_function():
    layer = SelfAttention(hidden_size=8, num_heads=2)
    parse = np.full((2, 5, 5), 0.2, "float32")

    @tf.function(input_signature=[tf.TensorSpec([None, None, 8]), tf.TensorSpec([None, None, None]), tf.TensorSpec([], tf.int32)])
    def run(x, probabilities, index):
        return layer(x, head_override=probabilities, head_override_index=index, return_attention_scores=True)[1]

    np.testing.assert_array_equal(np.asarray(run(X, parse, tf.constant(0)))[:, 0], parse)


def test_dropout_acts_on_values_not_on_returned_weights():
    layer = SelfAttention(hidden_size=8, num_heads=2, dropout=0.5)
    _, inference = layer(X, mask=MASK, return_attention_scores=True, training=False)
    out, training = layer(X, mask=MASK, return_attention_scores=True, training=True)
    np.testing.assert_array_equal(np.asarray(inference), np.asarray(training))
    assert not np.allclose(np.asarray(out), np.asarray(layer(X, mask=MASK, training=False)))


def test_orthogonal_projections_by_default():
    layer = SelfAttention(hidden_size=8, num_heads=2)
    layer(X)
    wq, wk = np.asarray(layer.query_dense.kernel), np.asarray(layer.key_dense.kernel)
    np.testing.assert_allclose(wq.T @ wq, np.eye(8), atol=1e-5)
    assert not np.allclose(wq, wk)  # every projection draws its own matrix


def test_serialisation_roundtrip_and_saved_model_file(tmp_path):
    layer = SelfAttention(hidden_size=8, num_heads=4, key_dim=3, value_dim=5, dropout=0.1, use_bias=True)
    layer(X)
    clone = roundtrip(layer, X)
    assert (clone.key_dim, clone.value_dim, clone.use_bias) == (3, 5, True)
    np.testing.assert_array_equal(np.asarray(clone(X, mask=MASK)), np.asarray(layer(X, mask=MASK)))

    inputs = keras.Input((None, 8))
    model = keras.Model(inputs, ResidualNorm(layer, dropout=0.2)(inputs))
    model.save(tmp_path / "attention.keras")
    loaded = keras.saving.load_model(tmp_path / "attention.keras")
    np.testing.assert_array_equal(np.asarray(loaded(X)), np.asarray(model(X)))


def test_mixed_precision(mixed_policy):
    # A soft distribution (LISA's predicted A_parse) with values that bfloat16/float16 cannot hold
    # exactly: it must reach the float32 weights unrounded, also through ResidualNorm.
    parse = RNG.dirichlet(np.ones(5), size=(2, 5)).astype("float32") * MASK[:, None, :]
    parse /= parse.sum(-1, keepdims=True)
    layer = SelfAttention(hidden_size=8, num_heads=2, dropout=0.1)
    out, weights = layer(X, mask=MASK, head_override=parse, head_override_index=0, return_attention_scores=True, training=True)
    _, wrapped = ResidualNorm(layer)(X, mask=MASK, head_override=parse, head_override_index=0, return_attention_scores=True)
    np.testing.assert_array_equal(np.asarray(wrapped)[:, 0], parse)
    assert keras.backend.standardize_dtype(out.dtype) == layer.compute_dtype != "float32"
    assert weights.dtype == tf.float32 and layer.query_dense.kernel.dtype == "float32"
    np.testing.assert_array_equal(np.asarray(weights)[:, 0], parse)
    assert np.all(np.asarray(weights)[0, :, :, 3:] == 0.0)
    assert np.all(np.isfinite(np.asarray(keras.ops.cast(out, "float32"))))
