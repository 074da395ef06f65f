"""Tests of lisa_tf.layers.sublayers: DeepAtt Eqns 5-10, masking, initialisation, keyword forwarding, serialisation."""

from __future__ import annotations

import keras
import numpy as np
import pytest

from lisa_tf.layers.attention import SelfAttention
from lisa_tf.layers.sublayers import BiLSTMSum, FeedForward, GLUConv, ResidualNorm
from tests.layers.conftest import roundtrip

RNG = np.random.default_rng(3)
X = RNG.normal(size=(3, 6, 8)).astype("float32")
LENGTHS = [6, 4, 1]
MASK = np.arange(6)[None, :] < np.array(LENGTHS)[:, None]


def with_noisy_padding(x):
    """``x`` with large random values at the padded positions."""
    noisy = x.copy()
    noisy[~MASK] = 100.0 * RNG.normal(size=(int((~MASK).sum()), x.shape[-1]))
    return noisy


def test_feed_forward_is_eqn_9():
    ffn = FeedForward(hidden_size=8, filter_size=12)
    y = np.asarray(ffn(X))
    w1, b1 = (np.asarray(v) for v in (ffn.inner_dense.kernel, ffn.inner_dense.bias))
    w2, b2 = (np.asarray(v) for v in (ffn.output_dense.kernel, ffn.output_dense.bias))
    np.testing.assert_allclose(y, np.maximum(X @ w1 + b1, 0) @ w2 + b2, atol=1e-5)


def test_feed_forward_lisa_activations_and_dropout():
    ffn = FeedForward(8, 12, relu_dropout=0.5, activation="leaky_relu", output_activation="leaky_relu")
    y = np.asarray(ffn(X))
    w1, w2 = np.asarray(ffn.inner_dense.kernel), np.asarray(ffn.output_dense.kernel)
    leaky = lambda v: np.where(v > 0, v, 0.2 * v)  # noqa: E731
    np.testing.assert_allclose(y, leaky(leaky(X @ w1) @ w2), atol=1e-5)
    assert not np.allclose(np.asarray(ffn(X, training=True)), y)


@pytest.mark.parametrize("make", [lambda: BiLSTMSum(8), lambda: GLUConv(8, kernel_size=3)], ids=["bilstm", "glu"])
def test_padded_batch_equals_each_sentence_alone(make):
    layer = make()
    batched = np.asarray(layer(with_noisy_padding(X), mask=MASK))
    for row, length in enumerate(LENGTHS):
        alone = np.asarray(layer(X[row : row + 1, :length]))[0]
        np.testing.assert_allclose(batched[row, :length], alone, atol=1e-5)
        assert np.all(batched[row, length:] == 0.0)


def test_bilstm_is_sum_of_two_directions():
    layer = BiLSTMSum(8)
    y = np.asarray(layer(X[:1, :4]))
    forward, backward = layer.bidirectional.forward_layer, layer.bidirectional.backward_layer
    right_to_left = np.asarray(backward(X[:1, :4]))  # go_backwards: outputs in reversed order
    expected = np.asarray(forward(X[:1, :4])) + right_to_left[:, ::-1]
    np.testing.assert_allclose(y, expected, atol=1e-5)
    # The backward direction makes the first output depend on the last token.
    changed = X[:1, :4].copy()
    changed[0, 3] += 1.0
    assert not np.allclose(np.asarray(layer(changed))[0, 0], y[0, 0])


def test_glu_is_eqn_8_with_width_3():
    layer = GLUConv(4, kernel_size=3)
    y = np.asarray(layer(X[:1]))[0]
    kernel, bias = np.asarray(layer.convolution.kernel), np.asarray(layer.convolution.bias)  # [3, 8, 8]
    padded = np.pad(X[0], [[1, 1], [0, 0]])
    conv = np.stack([sum(padded[t + k] @ kernel[k] for k in range(3)) + bias for t in range(6)])
    linear, gate = conv[:, :4], conv[:, 4:]
    np.testing.assert_allclose(y, linear / (1 + np.exp(-gate)), atol=1e-5)


def test_orthogonal_initialisation():
    ffn = FeedForward(8, 8)
    ffn(X)
    w1, w2 = np.asarray(ffn.inner_dense.kernel), np.asarray(ffn.output_dense.kernel)
    np.testing.assert_allclose(w1.T @ w1, np.eye(8), atol=1e-5)
    assert not np.allclose(w1, w2)
    wide = FeedForward(8, 32)
    wide(X)
    w = np.asarray(wide.inner_dense.kernel)  # [8, 32]: orthonormal rows
    np.testing.assert_allclose(w @ w.T, np.eye(8), atol=1e-5)


def layer_norm(v, epsilon=1e-6):
    mean, var = v.mean(-1, keepdims=True), v.var(-1, keepdims=True)
    return (v - mean) / np.sqrt(var + epsilon)


def test_residual_norm_post_and_pre():
    ffn = FeedForward(8, 12)
    post = ResidualNorm(ffn, dropout=0.3)
    np.testing.assert_allclose(np.asarray(post(X)), layer_norm(X + np.asarray(ffn(X))), atol=1e-4)
    pre = ResidualNorm(FeedForward(8, 12), normalize_first=True)
    pre(X)
    expected = X + np.asarray(pre.layer(layer_norm(X)))
    np.testing.assert_allclose(np.asarray(pre(X)), expected, atol=1e-4)
    assert not np.allclose(np.asarray(post(X, training=True)), np.asarray(post(X)))


def test_residual_norm_passes_mask_and_attention_arguments():
    block = ResidualNorm(SelfAttention(8, 2))
    noisy = with_noisy_padding(X)
    a = np.asarray(block(X, mask=MASK))
    np.testing.assert_allclose(np.asarray(block(noisy, mask=MASK))[MASK], a[MASK], atol=1e-4)
    parse = np.eye(6, dtype="float32")[np.zeros((3, 6), int)]
    y, weights = block(X, mask=MASK, head_override=parse, head_override_index=1, return_attention_scores=True)
    np.testing.assert_array_equal(np.asarray(weights)[:, 1], parse)
    assert y.shape == X.shape
    with pytest.raises(ValueError, match="head_override"):
        ResidualNorm(FeedForward(8, 12))(X, head_override=parse)


class ScaleShift(keras.layers.Layer):
    """A test sub-layer with keyword-only options: ``scale · x + shift``, optionally with extras."""

    def call(self, inputs, scale=1.0, shift=None, with_extras=False):
        outputs = inputs * scale if shift is None else inputs * scale + shift
        return (outputs, outputs * 2.0, "tag") if with_extras else outputs


def test_residual_norm_forwards_every_keyword_to_the_sub_layer():
    block = ResidualNorm(ScaleShift())
    shift = RNG.normal(size=(1, 1, 8)).astype("float32")
    plain = np.asarray(block(X))
    np.testing.assert_allclose(plain, layer_norm(2.0 * X), atol=1e-4)
    # A Python value alone, a tensor alone, and both together (Keras refuses one nested argument
    # mixing tensors with Python values, so this also checks how they travel).
    np.testing.assert_allclose(np.asarray(block(X, scale=3.0)), layer_norm(4.0 * X), atol=1e-4)
    np.testing.assert_allclose(np.asarray(block(X, shift=shift)), layer_norm(2.0 * X + shift), atol=1e-4)
    both = block(X, scale=3.0, shift=keras.ops.convert_to_tensor(shift))
    np.testing.assert_allclose(np.asarray(both), layer_norm(4.0 * X + shift), atol=1e-4)
    with pytest.raises(ValueError, match="ScaleShift.call\\(\\) takes no argument 'offset'"):
        block(X, offset=1.0)


def test_residual_norm_returns_the_sub_layer_extras_unchanged():
    y, doubled, tag = ResidualNorm(ScaleShift())(X, scale=3.0, with_extras=True)
    np.testing.assert_allclose(np.asarray(y), layer_norm(4.0 * X), atol=1e-4)
    np.testing.assert_allclose(np.asarray(doubled), 6.0 * X, atol=1e-5)
    assert tag == "tag"


def test_residual_norm_forwards_symbolic_tensors_in_a_functional_model():
    x_in, shift_in = keras.Input((None, 8)), keras.Input((None, 8))
    model = keras.Model([x_in, shift_in], ResidualNorm(ScaleShift())(x_in, scale=3.0, shift=shift_in))
    shift = RNG.normal(size=X.shape).astype("float32")
    np.testing.assert_allclose(np.asarray(model([X, shift])), layer_norm(4.0 * X + shift), atol=1e-4)


def test_residual_norm_uses_the_implicit_mask_also_with_forwarded_tensors():
    block = ResidualNorm(SelfAttention(8, 2))
    zeroed = np.where(MASK[..., None], X, 0.0).astype("float32")
    implicit = keras.layers.Masking(0.0)(zeroed)
    np.testing.assert_allclose(np.asarray(block(implicit)), np.asarray(block(zeroed, mask=MASK)), atol=1e-6)
    parse = np.eye(6, dtype="float32")[np.zeros((3, 6), int)]
    explicit = block(zeroed, mask=MASK, head_override=parse, head_override_index=1)
    np.testing.assert_allclose(
        np.asarray(block(implicit, head_override=parse, head_override_index=1)), np.asarray(explicit), atol=1e-6
    )
    assert not np.allclose(np.asarray(block(zeroed, head_override=parse, head_override_index=1)), np.asarray(explicit))


@pytest.mark.parametrize(
    "make",
    [
        lambda: ResidualNorm(FeedForward(8, 12, relu_dropout=0.1, activation="leaky_relu"), dropout=0.2),
        lambda: ResidualNorm(SelfAttention(8, 2, dropout=0.1, use_bias=True), dropout=0.1),
        lambda: ResidualNorm(BiLSTMSum(8, dropout=0.1), normalize_first=True, epsilon=1e-5),
        lambda: ResidualNorm(GLUConv(8, kernel_size=5, use_bias=False)),
    ],
    ids=["ffn", "attention", "bilstm", "glu"],
)
def test_serialisation_roundtrip(make):
    layer = make()
    layer(X, mask=MASK)
    clone = roundtrip(layer, X)
    assert clone.layer.get_config() == layer.layer.get_config()
    np.testing.assert_allclose(np.asarray(clone(X, mask=MASK)), np.asarray(layer(X, mask=MASK)), atol=1e-6)


@pytest.mark.parametrize("make", [lambda: FeedForward(8, 12), lambda: BiLSTMSum(8), lambda: GLUConv(8)], ids=["ffn", "bilstm", "glu"])
def test_mixed_precision(mixed_policy, make):
    block = ResidualNorm(make(), dropout=0.1)
    y = block(X, mask=MASK, training=True)
    assert keras.backend.standardize_dtype(y.dtype) == block.compute_dtype != "float32"
    assert all(w.dtype == "float32" for w in block.weights)
    assert np.all(np.isfinite(np.asarray(keras.ops.cast(y, "float32"))))
