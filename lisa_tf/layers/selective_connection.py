"""Selective connection: a gated state carried across the layers of a self-attention stack.

Park et al. 2019, "Selectively Connected Self-Attentions for Semantic Role Labeling", §3.3,
Eqns 9-12. Between consecutive attentive representation modules (multi-head self-attention +
fully connected sub-layer, each with residual + layer normalisation, §3.2) a GRU-like unit
updates a per-token state ``S_i`` from the module output ``X_i`` and the previous state
``S_{i-1}``. The recurrence runs over *depth* (layer index ``i``), not over time: every token
position is updated independently, so the layer never mixes positions.

Two layers live here:

- :class:`SelectiveConnection` computes one step ``S_i = SC(X_i, S_{i-1})`` (Eqns 9-12).
- :class:`SelectiveConnectionInitialState` produces ``S_0`` (§3.3, "S_0 ~ N(0, 1/s)").

What the paper says and leaves open (the model, not this file, decides; see
``lisa_tf/models/selective.py``):

- **Shared or per-layer weights.** Eqns 9-12 index the state and gates by layer (``z_i``,
  ``g_i``, ``S_i``) but write the weights without a layer index (``W_z``, ``U_z``, ``W_g``,
  ``U_g``, ``W``, ``U``), which reads as one cell applied at every depth, like a recurrent cell
  unrolled over layers. One :class:`SelectiveConnection` instance called N times gives that;
  N instances give per-layer weights.
- **What feeds the next attentive module.** §3.3: "The input representation X_i is generated
  from the i-th layer of attentive representation module"; §3.4: "each module is updated using
  the selective connection module" and "To stabilize the activation of deep structure, we apply
  a residual connection followed by layer normalization"; §3.5: "At each step, the model
  selectively takes the previously generated features as an input to the next. At last, we take
  the outputs of the topmost self-attention layer [...] fed to softmax layer"; §4.3 (ablation):
  "Without the selective connection, the stack of attentive representation is constructed only
  with the fully connected layer followed by layer normalization." Figure 4, which would settle
  it, is not available in the text. Two readings follow: (a) the state is what the next module
  reads: module ``i + 1`` takes ``S_i`` (or ``LN(X_i + S_i)``, the residual + LN of §3.4) as
  its input, so the selective connection sits *between* modules, replacing a plain FC + LN
  link — the ablation sentence and "takes the previously generated features as an input to the
  next" support this; it requires ``s = d``; (b) the modules are chained on their own outputs
  ``X_i`` and ``S_i`` runs alongside, feeding only the per-layer classifiers (the "outputs of
  the topmost self-attention layer" sentence supports this). This layer only returns ``S_i``;
  both wirings are possible on top of it.
- **Notation.** Eqn 12 defines ``ĝ_i`` while Eqn 11 uses ``g_i``; they are read as the same
  gate. Eqn 10's ``f`` is "a nonlinear function, for example, sigmoid" (sigmoid here).
- **Biases.** Eqns 10-12 have none. This layer adds one bias per gate/candidate by default
  (as in a GRU; a learned modulator bias sets how much state is carried by default);
  ``use_bias=False`` gives the equations exactly.
"""

from __future__ import annotations

import keras
from keras import ops

from lisa_tf.layers.initializers import clone_initializer
from lisa_tf.layers.masking import fill_padded_positions


@keras.saving.register_keras_serializable(package="lisa_tf")
class SelectiveConnection(keras.layers.Layer):
    """One step of the selective connection (Park et al. 2019, §3.3, Eqns 9-12).

    Given the output ``X_i`` of the i-th attentive representation module and the previous state
    ``S_{i-1}``, computes, position by position:

    ```
    z_i = f(W_z X_i + U_z S_{i-1} + b_z)            (Eqn 10, selective modulator)
    g_i = f(W_g X_i + U_g S_{i-1} + b_g)            (Eqn 12, gating unit)
    Ŝ_i = tanh(W X_i + U (g_i ⊙ S_{i-1}) + b)       (Eqn 11, candidate state)
    S_i = (1 − z_i) ⊙ S_{i-1} + z_i ⊙ Ŝ_i           (Eqn 9)
    ```

    with ``f`` the sigmoid (the paper: "f is a nonlinear function, for example, sigmoid"). The
    input width ``d`` and the state width ``s`` are read from the input shapes in ``build()``;
    they may differ. Weights have no layer index in the paper, so one instance can be called at
    every depth (shared weights) or one instance made per layer (see the module docstring).

    Padding: at padded positions the state is carried unchanged, ``S_i = S_{i-1}`` (as if
    ``z_i = 0``), so a padded position keeps whatever ``S_0`` gave it and never takes values
    computed from padded inputs; real positions are never affected by padded ones because the
    layer does not mix positions. The mask is the explicit ``padding_mask`` if given, otherwise
    the implicit Keras mask carried by ``inputs`` (e.g. from ``Embedding(mask_zero=True)``);
    the output carries the same implicit mask.

    Mixed precision: the gates, candidate and update are computed in the layer's compute dtype
    (e.g. bfloat16 under ``mixed_bfloat16``); variables stay in the variable dtype (float32).

    Args:
        use_bias: bool. Add a bias inside each of Eqns 10-12 (not in the paper; ``False`` gives
            the equations exactly). Defaults to ``True``.
        gate_activation: string or ``keras.activations`` function, ``f`` of Eqns 10 and 12.
            Defaults to ``"sigmoid"``.
        kernel_initializer: initializer of ``W_z``, ``W_g``, ``W`` (input kernels). Defaults to
            ``"orthogonal"`` (§4.2: "We initialize the weights of all sub-layers as random
            orthogonal matrices").
        recurrent_initializer: initializer of ``U_z``, ``U_g``, ``U`` (state kernels).
            Defaults to ``"orthogonal"``.
        bias_initializer: initializer of ``b``, ``b_g``. Defaults to ``"zeros"``.
        modulator_bias_initializer: initializer of ``b_z``; a negative constant starts the
            stack carrying more of the previous state. Defaults to ``"zeros"``.
        **kwargs: other keyword arguments of ``keras.layers.Layer`` (``name``, ``dtype``, ...).

    Call arguments:
        inputs: ``X_i``, float tensor ``[batch, time, d]``, the i-th attentive module's output.
        state: ``S_{i-1}``, float tensor ``[batch, time, s]``.
        padding_mask: optional bool/int tensor ``[batch, time]``, true (non-zero) at real
            tokens. Falls back to ``inputs_mask``.
        inputs_mask: the implicit Keras mask of ``inputs`` (e.g. from
            ``Embedding(mask_zero=True)``), passed by Keras itself; not meant to be given.

    Returns:
        ``S_i``, tensor ``[batch, time, s]`` in the compute dtype.

    Example:

    ```python
    import numpy as np
    import keras
    from lisa_tf.layers.selective_connection import (
        SelectiveConnection, SelectiveConnectionInitialState)

    x = np.random.uniform(size=(2, 7, 16)).astype("float32")   # X_1 [B, T, d]
    mask = np.array([[1] * 7, [1] * 4 + [0] * 3], dtype=bool)
    s = SelectiveConnectionInitialState(16, seed=1)(x)           # S_0 [B, T, s]
    cell = SelectiveConnection()
    for _ in range(3):                                           # shared over depth
        s = cell(x, s, padding_mask=mask)                        # S_i
    assert tuple(s.shape) == (2, 7, 16)
    ```

    References:
        - Park et al. 2019, "Selectively Connected Self-Attentions for Semantic Role
          Labeling", Applied Sciences 9(8):1716, §3.3, Eqns 9-12.
    """

    def __init__(
        self,
        use_bias=True,
        gate_activation="sigmoid",
        kernel_initializer="orthogonal",
        recurrent_initializer="orthogonal",
        bias_initializer="zeros",
        modulator_bias_initializer="zeros",
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.use_bias = use_bias
        self.gate_activation = keras.activations.get(gate_activation)
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.recurrent_initializer = keras.initializers.get(recurrent_initializer)
        self.bias_initializer = keras.initializers.get(bias_initializer)
        self.modulator_bias_initializer = keras.initializers.get(modulator_bias_initializer)
        self.supports_masking = True

    def build(self, inputs_shape, state_shape):
        if len(inputs_shape) != len(state_shape):
            raise ValueError(
                "SelectiveConnection expects `inputs` [batch, time, d] and `state` [batch, time, s] "
                f"of the same rank; found inputs shape {tuple(inputs_shape)} and state shape "
                f"{tuple(state_shape)}."
            )
        input_dim, state_dim = inputs_shape[-1], state_shape[-1]
        if input_dim is None or state_dim is None:
            raise ValueError(
                "SelectiveConnection needs a known last dimension for `inputs` and `state`; "
                f"found inputs shape {tuple(inputs_shape)} and state shape {tuple(state_shape)}."
            )
        self.input_dim, self.state_dim = int(input_dim), int(state_dim)

        # Each weight gets its own copy of its initializer, a seeded one offset by the weight's
        # index, so that weights sharing an initializer differ yet stay reproducible.
        def kernel(name, rows, initializer, index):
            initializer = clone_initializer(initializer, seed_offset=index)
            return self.add_weight(name=name, shape=(rows, self.state_dim), initializer=initializer)

        def bias(name, initializer, index):
            if not self.use_bias:
                return None
            initializer = clone_initializer(initializer, seed_offset=index)
            return self.add_weight(name=name, shape=(self.state_dim,), initializer=initializer)

        # Eqn 10: selective modulator z.
        self.kernel_z = kernel("kernel_z", self.input_dim, self.kernel_initializer, 0)
        self.recurrent_kernel_z = kernel("recurrent_kernel_z", self.state_dim, self.recurrent_initializer, 3)
        self.bias_z = bias("bias_z", self.modulator_bias_initializer, 6)
        # Eqn 12: gating unit g.
        self.kernel_g = kernel("kernel_g", self.input_dim, self.kernel_initializer, 1)
        self.recurrent_kernel_g = kernel("recurrent_kernel_g", self.state_dim, self.recurrent_initializer, 4)
        self.bias_g = bias("bias_g", self.bias_initializer, 7)
        # Eqn 11: candidate state Ŝ.
        self.kernel = kernel("kernel", self.input_dim, self.kernel_initializer, 2)
        self.recurrent_kernel = kernel("recurrent_kernel", self.state_dim, self.recurrent_initializer, 5)
        self.bias = bias("bias", self.bias_initializer, 8)
        self.built = True

    def _affine(self, x, kernel, state, recurrent_kernel, bias):
        """``x W + state U (+ b)`` in the compute dtype."""
        out = ops.matmul(x, ops.cast(kernel, self.compute_dtype)) + ops.matmul(
            state, ops.cast(recurrent_kernel, self.compute_dtype)
        )
        if bias is not None:
            out = out + ops.cast(bias, self.compute_dtype)
        return out

    def call(self, inputs, state, padding_mask=None, inputs_mask=None):
        # ``inputs_mask`` is filled by Keras with the implicit mask of ``inputs`` (the
        # ``<argument>_mask`` convention of ``Layer.__call__`` for layers with several tensor
        # arguments, as in ``keras.layers.MultiHeadAttention``'s ``query_mask``).
        if padding_mask is None:
            padding_mask = inputs_mask
        x = ops.cast(inputs, self.compute_dtype)
        s_prev = ops.cast(state, self.compute_dtype)

        z = self.gate_activation(  # Eqn 10
            self._affine(x, self.kernel_z, s_prev, self.recurrent_kernel_z, self.bias_z)
        )
        g = self.gate_activation(  # Eqn 12
            self._affine(x, self.kernel_g, s_prev, self.recurrent_kernel_g, self.bias_g)
        )
        s_hat = ops.tanh(  # Eqn 11
            self._affine(x, self.kernel, g * s_prev, self.recurrent_kernel, self.bias)
        )
        s_new = (1.0 - z) * s_prev + z * s_hat  # Eqn 9

        # Padded positions carry the state unchanged (z = 0); a select, not a multiply by the mask,
        # so non-finite values computed from padded inputs cannot leak in.
        return fill_padded_positions(s_new, padding_mask, fill=s_prev)

    def compute_output_shape(self, inputs_shape, state_shape):
        return tuple(state_shape)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "use_bias": self.use_bias,
                "gate_activation": keras.activations.serialize(self.gate_activation),
                "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
                "recurrent_initializer": keras.initializers.serialize(self.recurrent_initializer),
                "bias_initializer": keras.initializers.serialize(self.bias_initializer),
                "modulator_bias_initializer": keras.initializers.serialize(self.modulator_bias_initializer),
            }
        )
        return config


@keras.saving.register_keras_serializable(package="lisa_tf")
class SelectiveConnectionInitialState(keras.layers.Layer):
    """The initial state ``S_0`` of the selective connection (Park et al. 2019, §3.3).

    The paper: "The initial state S_0 is set to be a vector whose elements sampled from a
    Gaussian distribution with mean 0 and variance 1/s where s denotes the size of the feature
    vector." So ``S_0`` is *one vector* of size ``s`` shared by every token of every sentence,
    drawn once from ``N(0, 1/s)``. The paper does not say whether it is trained.

    Choice made here: a weight of shape ``[s]`` initialised from ``N(0, 1/s)`` and, by default,
    **not trained** (``trainable_state=False``). Reasons: "is set to be a vector whose elements
    sampled" describes a value that is drawn once and kept; §4.2 gives the initialisation of
    the trained "other parameters" separately (``N(0, 1/d)``, with ``d`` not ``s``), which
    suggests ``S_0`` is not meant as one of them, though the text never says so. Keeping it as
    a (non-trainable) weight means the same ``S_0`` is saved with checkpoints and exports, so
    inference is deterministic. Sampling a fresh ``S_0`` per batch is rejected: it would make
    predictions random at inference time, and nothing in the paper suggests noise injection.
    ``trainable_state=True`` learns the vector instead (same initialisation); the kernels
    ``U_z``, ``U_g``, ``U`` can adapt to a fixed ``S_0``, so the difference should be small.

    Args:
        state_size: int, ``s``, the width of the state.
        trainable_state: bool. Train ``S_0`` with the rest of the model. Defaults to ``False``.
        seed: optional int, seed of the ``N(0, 1/s)`` draw (``None``: unseeded).
        **kwargs: other keyword arguments of ``keras.layers.Layer``.

    Call arguments:
        inputs: any tensor ``[batch, time, ...]`` (typically the embeddings or ``X_1``); only
            its leading two dimensions are used.

    Returns:
        ``S_0`` broadcast to ``[batch, time, state_size]`` in the compute dtype; every position
        holds the same vector.

    Example:

    ```python
    import numpy as np
    from lisa_tf.layers.selective_connection import SelectiveConnectionInitialState

    s0 = SelectiveConnectionInitialState(state_size=8, seed=3)(np.zeros((2, 5, 16)))
    assert tuple(s0.shape) == (2, 5, 8)
    ```

    References:
        - Park et al. 2019, "Selectively Connected Self-Attentions for Semantic Role
          Labeling", Applied Sciences 9(8):1716, §3.3 (text before Eqn 9).
    """

    def __init__(self, state_size, trainable_state=False, seed=None, **kwargs):
        super().__init__(**kwargs)
        if int(state_size) <= 0:
            raise ValueError(f"SelectiveConnectionInitialState expects state_size > 0; found {state_size}.")
        self.state_size = int(state_size)
        self.trainable_state = bool(trainable_state)
        self.seed = seed
        self.supports_masking = True

    def build(self, inputs_shape):
        self.initial_state = self.add_weight(
            name="initial_state",
            shape=(self.state_size,),
            # Variance 1/s (§3.3), i.e. standard deviation s^(-1/2).
            initializer=keras.initializers.RandomNormal(mean=0.0, stddev=self.state_size**-0.5, seed=self.seed),
            trainable=self.trainable_state,
        )
        self.built = True

    def call(self, inputs):
        leading = ops.shape(inputs)[:2]
        s0 = ops.cast(self.initial_state, self.compute_dtype)
        return ops.broadcast_to(s0, (leading[0], leading[1], self.state_size))

    def compute_output_shape(self, inputs_shape):
        return (inputs_shape[0], inputs_shape[1], self.state_size)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "state_size": self.state_size,
                "trainable_state": self.trainable_state,
                "seed": self.seed,
            }
        )
        return config
