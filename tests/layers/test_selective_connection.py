"""Tests for the selective connection layer (Park et al. 2019, §3.3, Eqns 9-12).

The reference below is written from the paper's equations in NumPy and fed the layer's own
weights; shapes, padding, the z = 0 property, serialisation, mixed precision and gradients are
checked as properties.
"""

from __future__ import annotations

import inspect
import re

import keras
import numpy as np
import pytest
import tensorflow as tf

from lisa_tf.layers.selective_connection import SelectiveConnection, SelectiveConnectionInitialState

B, T, D, S = 3, 6, 10, 7  # d != s on purpose: the layer must not assume equal widths.


def _sigmoid(v):
    return 1.0 / (1.0 + np.exp(-v))


def _reference_step(x, s_prev, w):
    """Eqns 9-12 in NumPy (float64), from the paper, with per-gate biases."""
    z = _sigmoid(x @ w["kernel_z"] + s_prev @ w["recurrent_kernel_z"] + w["bias_z"])  # Eqn 10
    g = _sigmoid(x @ w["kernel_g"] + s_prev @ w["recurrent_kernel_g"] + w["bias_g"])  # Eqn 12
    s_hat = np.tanh(x @ w["kernel"] + (g * s_prev) @ w["recurrent_kernel"] + w["bias"])  # Eqn 11
    return (1.0 - z) * s_prev + z * s_hat  # Eqn 9


def _weights(layer):
    """The layer's weights as float64 arrays, keyed by weight name."""
    return {v.name: np.asarray(v.numpy(), dtype=np.float64) for v in layer.weights}


def _inputs(seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(B, T, D)).astype("float32")
    s = rng.normal(scale=0.5, size=(B, T, S)).astype("float32")
    mask = np.ones((B, T), dtype=bool)
    mask[1, 4:] = False
    mask[2, 2:] = False
    return x, s, mask


def _randomise(layer, seed=1):
    """Give every weight (biases too) non-trivial values so no term of the equations is zero."""
    rng = np.random.default_rng(seed)
    for v in layer.weights:
        v.assign(rng.normal(scale=0.6, size=v.shape).astype("float32"))


def test_output_shape_and_weight_shapes():
    x, s, _ = _inputs()
    layer = SelectiveConnection()
    out = layer(x, s)
    assert tuple(out.shape) == (B, T, S)
    shapes = {v.name: tuple(v.shape) for v in layer.weights}
    assert shapes == {
        "kernel_z": (D, S),
        "recurrent_kernel_z": (S, S),
        "bias_z": (S,),
        "kernel_g": (D, S),
        "recurrent_kernel_g": (S, S),
        "bias_g": (S,),
        "kernel": (D, S),
        "recurrent_kernel": (S, S),
        "bias": (S,),
    }
    assert layer.compute_output_shape((B, T, D), (B, T, S)) == (B, T, S)
    # Symbolic use (functional model) infers the same shape.
    sym = SelectiveConnection()(keras.Input((None, D)), keras.Input((None, S)))
    assert tuple(sym.shape) == (None, None, S)


def test_without_bias_has_exactly_the_paper_weights():
    x, s, _ = _inputs()
    layer = SelectiveConnection(use_bias=False)
    layer(x, s)
    assert sorted(v.name for v in layer.weights) == sorted(
        ["kernel_z", "recurrent_kernel_z", "kernel_g", "recurrent_kernel_g", "kernel", "recurrent_kernel"]
    )


def test_matches_numpy_equations_over_three_layers():
    """A shared cell applied three times from S_0 equals Eqns 9-12 applied three times."""
    x, _, _ = _inputs()
    rng = np.random.default_rng(5)
    xs = [x] + [rng.normal(size=x.shape).astype("float32") for _ in range(2)]  # X_1, X_2, X_3
    init = SelectiveConnectionInitialState(S, seed=4)
    cell = SelectiveConnection()
    state = init(xs[0])
    cell(xs[0], state)  # build
    _randomise(cell)
    w = _weights(cell)
    s0 = np.asarray(init.initial_state.numpy(), dtype=np.float64)

    expected = np.broadcast_to(s0, (B, T, S))
    for xi in xs:
        state = cell(xi, state)
        expected = _reference_step(xi.astype(np.float64), expected, w)
        np.testing.assert_allclose(state.numpy(), expected, rtol=1e-5, atol=1e-5)
    # The state moved away from S_0 (otherwise the comparison above would be vacuous).
    assert np.abs(expected - s0).max() > 0.1


def test_without_bias_matches_equations():
    x, s, _ = _inputs(3)
    layer = SelectiveConnection(use_bias=False)
    layer(x, s)
    _randomise(layer, seed=7)
    w = _weights(layer)
    w.update(bias_z=0.0, bias_g=0.0, bias=0.0)
    np.testing.assert_allclose(
        layer(x, s).numpy(), _reference_step(x.astype(np.float64), s.astype(np.float64), w), rtol=1e-5, atol=1e-5
    )


def test_modulator_closed_keeps_state_and_open_takes_candidate():
    """z = 0 (bias_z -> -inf) gives S_i = S_{i-1}; z = 1 gives S_i = Ŝ_i (Eqn 9)."""
    x, s, _ = _inputs()
    layer = SelectiveConnection()
    layer(x, s)
    _randomise(layer)
    layer.bias_z.assign(np.full((S,), -1e4, dtype="float32"))
    np.testing.assert_array_equal(layer(x, s).numpy(), s)

    layer.bias_z.assign(np.full((S,), 1e4, dtype="float32"))
    w = _weights(layer)
    x64, s64 = x.astype(np.float64), s.astype(np.float64)
    g = _sigmoid(x64 @ w["kernel_g"] + s64 @ w["recurrent_kernel_g"] + w["bias_g"])
    s_hat = np.tanh(x64 @ w["kernel"] + (g * s64) @ w["recurrent_kernel"] + w["bias"])
    np.testing.assert_allclose(layer(x, s).numpy(), s_hat, rtol=1e-5, atol=1e-5)


def test_padding_keeps_state_and_never_reaches_real_positions():
    x, s, mask = _inputs()
    layer = SelectiveConnection()
    layer(x, s)
    _randomise(layer)
    out = layer(x, s, padding_mask=mask).numpy()

    # Padded positions carry the previous state unchanged.
    np.testing.assert_array_equal(out[~mask], s[~mask])
    # Real positions are updated, and exactly as without a mask.
    unmasked = layer(x, s).numpy()
    np.testing.assert_array_equal(out[mask], unmasked[mask])
    assert np.abs(out[mask] - s[mask]).max() > 0.1

    # Garbage (huge, inf, nan) at padded positions changes nothing at real positions and does
    # not leak into the padded positions' state either.
    x_bad, s_bad = x.copy(), s.copy()
    x_bad[~mask] = np.nan
    x_bad[1, 4] = np.inf
    s_bad[~mask] = 1e30
    out_bad = layer(x_bad, s_bad, padding_mask=mask).numpy()
    np.testing.assert_array_equal(out_bad[mask], out[mask])
    np.testing.assert_array_equal(out_bad[~mask], s_bad[~mask])


def test_implicit_keras_mask_is_used_and_propagated():
    x, s, mask = _inputs()
    x = np.where(mask[..., None], x, 0.0).astype("float32")  # Masking(0.0) marks padded rows
    layer = SelectiveConnection()
    layer(x, s)
    _randomise(layer)
    masked_x = keras.layers.Masking(mask_value=0.0)(tf.constant(x))
    out = layer(masked_x, tf.constant(s))
    np.testing.assert_array_equal(out.numpy(), layer(x, s, padding_mask=mask).numpy())
    np.testing.assert_array_equal(np.asarray(out._keras_mask), mask)


def test_initial_state_is_one_fixed_vector_with_variance_one_over_s():
    size = 4096
    layer = SelectiveConnectionInitialState(size, seed=11)
    s0 = layer(np.zeros((2, 3, 5), dtype="float32")).numpy()
    assert s0.shape == (2, 3, size)
    # One vector shared by every position of every sentence, and the same on every call.
    np.testing.assert_array_equal(s0, np.broadcast_to(s0[0, 0], s0.shape))
    np.testing.assert_array_equal(layer(np.zeros((1, 2, 5), dtype="float32")).numpy()[0, 0], s0[0, 0])
    # N(0, 1/s): the sample variance of 4096 draws is within ~2.2% (1 sd) of 1/s; mean within 4 sd.
    v = s0[0, 0].astype(np.float64)
    assert abs(v.var() * size - 1.0) < 0.1
    assert abs(v.mean()) < 4.0 / size
    # Not trained by default (see the class docstring); trainable on request.
    assert layer.trainable_weights == [] and len(layer.non_trainable_weights) == 1
    learned = SelectiveConnectionInitialState(8, trainable_state=True)
    learned(np.zeros((1, 1, 3), dtype="float32"))
    assert [v.name for v in learned.trainable_weights] == ["initial_state"]
    with pytest.raises(ValueError, match="state_size > 0"):
        SelectiveConnectionInitialState(0)


def test_seeded_initializers_give_distinct_reproducible_weights():
    x, s, _ = _inputs()
    kwargs = dict(
        kernel_initializer=keras.initializers.Orthogonal(seed=2),
        recurrent_initializer=keras.initializers.Orthogonal(seed=2),
        bias_initializer=keras.initializers.RandomNormal(seed=2),
        modulator_bias_initializer=keras.initializers.RandomNormal(seed=2),
    )
    a, b = SelectiveConnection(**kwargs), SelectiveConnection(**kwargs)
    a(x, s)
    b(x, s)
    wa, wb = _weights(a), _weights(b)
    for name in wa:
        np.testing.assert_array_equal(wa[name], wb[name])
    assert not np.allclose(wa["kernel_z"], wa["kernel_g"])
    assert not np.allclose(wa["kernel_g"], wa["kernel"])
    assert not np.allclose(wa["recurrent_kernel_z"], wa["recurrent_kernel"])
    assert not np.allclose(wa["bias_g"], wa["bias"])


def test_rank_mismatch_is_reported():
    with pytest.raises(ValueError, match="same rank"):
        SelectiveConnection()(np.zeros((2, 3, 4), "float32"), np.zeros((2, 5), "float32"))


def _constructor_args(cls):
    return {
        name
        for name, p in inspect.signature(cls.__init__).parameters.items()
        if name != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)
    }


def test_get_config_has_every_constructor_argument_and_round_trips():
    layer = SelectiveConnection(
        use_bias=False,
        gate_activation="hard_sigmoid",
        kernel_initializer="glorot_uniform",
        recurrent_initializer=keras.initializers.Orthogonal(gain=0.5, seed=3),
        bias_initializer="ones",
        modulator_bias_initializer=keras.initializers.Constant(-2.0),
        name="sc",
    )
    config = layer.get_config()
    assert _constructor_args(SelectiveConnection) <= set(config)
    clone = SelectiveConnection.from_config(config)
    assert clone.get_config() == config
    assert clone.use_bias is False
    assert clone.recurrent_initializer.gain == 0.5

    init = SelectiveConnectionInitialState(5, trainable_state=True, seed=9, name="s0")
    config = init.get_config()
    assert _constructor_args(SelectiveConnectionInitialState) <= set(config)
    assert SelectiveConnectionInitialState.from_config(config).get_config() == config


def test_keras_saving_round_trip(tmp_path):
    """A functional model S_0 -> SC -> SC (shared cell) saves and reloads with identical output."""
    x_in = keras.Input((None, D), name="x")
    mask_in = keras.Input((None,), dtype="bool", name="mask")
    cell = SelectiveConnection(modulator_bias_initializer=keras.initializers.Constant(-1.0), name="sc")
    state = SelectiveConnectionInitialState(S, name="s0")(x_in)
    state = cell(x_in, state, padding_mask=mask_in)
    state = cell(x_in, state, padding_mask=mask_in)
    model = keras.Model([x_in, mask_in], state)

    x, _, mask = _inputs()
    before = model.predict([x, mask], verbose=0)
    path = tmp_path / "selective.keras"
    model.save(path)
    loaded = keras.saving.load_model(path)
    np.testing.assert_array_equal(loaded.predict([x, mask], verbose=0), before)
    assert isinstance(loaded.get_layer("sc"), SelectiveConnection)
    # The fixed S_0 is saved with the model, not redrawn on load.
    np.testing.assert_array_equal(
        loaded.get_layer("s0").initial_state.numpy(), model.get_layer("s0").initial_state.numpy()
    )
    np.testing.assert_array_equal(loaded.get_layer("sc").bias_z.numpy(), np.full((S,), -1.0, "float32"))


def test_mixed_bfloat16_policy():
    x, s, mask = _inputs()
    reference = SelectiveConnection()
    reference(x, s)
    _randomise(reference)
    expected = reference(x, s, padding_mask=mask).numpy()

    previous = keras.mixed_precision.dtype_policy()
    keras.mixed_precision.set_global_policy("mixed_bfloat16")
    try:
        init = SelectiveConnectionInitialState(S, seed=1)
        layer = SelectiveConnection()
        assert init(x).dtype == tf.bfloat16
        out = layer(x, s, padding_mask=mask)
        assert out.dtype == tf.bfloat16
        assert all(v.dtype == "float32" for v in layer.weights)
        layer.set_weights(reference.get_weights())
        out = layer(x, s, padding_mask=mask)
        # bfloat16 keeps 8 significant bits: |error| of a value in (-3, 3) stays well under 0.1.
        np.testing.assert_allclose(out.numpy().astype(np.float32), expected, atol=0.1)
        # Padded positions still carry the (bfloat16-rounded) previous state.
        s_bf16 = tf.cast(tf.cast(s, tf.bfloat16), tf.float32).numpy()
        np.testing.assert_array_equal(out.numpy().astype(np.float32)[~mask], s_bf16[~mask])
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.cast(layer(x, s), tf.float32))
        grads = tape.gradient(loss, layer.trainable_weights)
        assert all(g is not None and g.dtype == tf.float32 for g in grads)
    finally:
        keras.mixed_precision.set_global_policy(previous)


def test_gradients_reach_every_weight_and_the_learned_initial_state():
    x, _, mask = _inputs()
    init = SelectiveConnectionInitialState(S, trainable_state=True, seed=2)
    cell = SelectiveConnection()
    probe = tf.constant(np.random.default_rng(8).normal(size=(B, T, S)).astype("float32"))
    with tf.GradientTape() as tape:
        state = init(x)
        for _ in range(2):
            state = cell(x, state, padding_mask=mask)
        loss = tf.reduce_sum(state * probe)
    variables = cell.trainable_weights + init.trainable_weights
    assert len(variables) == 10
    grads = tape.gradient(loss, variables)
    for v, g in zip(variables, grads):
        assert g is not None, v.name
        assert float(tf.norm(g)) > 0.0, v.name


def test_docstring_examples_run():
    for cls in (SelectiveConnection, SelectiveConnectionInitialState):
        blocks = re.findall(r"```python\n(.*?)```", cls.__doc__, flags=re.S)
        assert len(blocks) == 1, cls.__name__
        exec(compile(inspect.cleandoc(blocks[0]), f"<{cls.__name__} example>", "exec"), {})
