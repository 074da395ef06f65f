"""DeepAtt's non-linear sub-layers and the residual + layer-normalisation wrapper.

Each DeepAtt layer (Tan et al. 2018, §3) is a non-linear sub-layer followed by an attention
sub-layer; three non-linear sub-layers are described (§3 "Nonlinear Sub-Layers") and compared
(Tables 1-2; Table 3 row 11 removes the sub-layer):

- :class:`FeedForward`: ``FFN(X) = ReLU(X W1) W2`` (Eqn 9); LISA's feed-forward (Strubell et al.
  2018, §2.1) uses leaky ReLU after both projections, so both activations are arguments.
- :class:`BiLSTMSum`: a forward and a backward LSTM whose outputs are summed (Eqns 5-7).
- :class:`GLUConv`: a gated linear unit over a width-3 convolution (Eqn 8; Dauphin et al. 2017).

:class:`ResidualNorm` wraps any of them, or the attention sub-layer, as
``LN(X + dropout(SubLayer(X)))`` (DeepAtt §3 "Deep Topology": Eqn 10 ``Y = X + Sub-Layer(X)`` and
the sentence after it, "We then apply layer normalization after the residual connection"; LISA
§2.1 Eqn 1), or pre-LN ``X + dropout(SubLayer(LN(X)))``.

Sub-layer weights default to orthogonal initialisation (DeepAtt §4 "Model Setup",
"Initialization": "We initialize the weights of all sub-layers as random orthogonal matrices").

Masking: every layer takes a ``[batch, time]`` padding mask (true on real tokens). The FFN is
position-wise; the BiLSTM and the convolution mix positions, so they zero (or skip) padded
positions so that no real token's output depends on what the padding holds.
"""

from __future__ import annotations

import inspect

import keras
from keras import ops

from lisa_tf.layers.dropout import Dropout
from lisa_tf.layers.initializers import clone_initializer
from lisa_tf.layers.masking import as_bool_mask, fill_padded_positions


@keras.saving.register_keras_serializable(package="lisa_tf")
class FeedForward(keras.layers.Layer):
    """Position-wise feed-forward sub-layer ``FFN(X) = f(X W1 + b1) W2 + b2`` (DeepAtt Eqn 9).

    Eqn 9 has no biases (``use_bias=False`` gives it exactly) and no output activation.

    Args:
        hidden_size: int. Output width ``d`` (DeepAtt: equal to the input width).
        filter_size: int. Inner width ``h_f`` (DeepAtt: 800).
        relu_dropout: float. Dropout on the inner activations (DeepAtt: 0.1).
        activation: activation ``f`` after the first projection: ``"relu"`` (DeepAtt) or
            ``"leaky_relu"`` (LISA §2.1), or any Keras activation.
        output_activation: activation after the second projection, ``None`` for DeepAtt; LISA
            §2.1 writes "two linear projections each followed by leaky ReLU activations".
        use_bias: bool. Biases in both projections.
        kernel_initializer: default orthogonal (DeepAtt §4 "Model Setup").
        bias_initializer: default zeros.
        **kwargs: other keyword arguments of ``keras.layers.Layer``.

    Call arguments:
        inputs: ``[batch, time, features]``.
        mask: optional padding mask; unused (the layer is position-wise) but propagated.
        training: bool. Dropout on or off.

    Example:
    ```python
    ffn = FeedForward(hidden_size=16, filter_size=64, relu_dropout=0.1)
    y = ffn(keras.random.normal((2, 5, 16)))        # [2, 5, 16]
    ```

    References:
        - Tan et al. 2018, "Deep Semantic Role Labeling with Self-Attention", §3 Eqn 9, §4 "Model Setup".
        - Strubell et al. 2018, "Linguistically-Informed Self-Attention for Semantic Role
          Labeling", §2.1.
    """

    def __init__(
        self,
        hidden_size: int,
        filter_size: int,
        relu_dropout: float = 0.0,
        activation="relu",
        output_activation=None,
        use_bias: bool = True,
        kernel_initializer="orthogonal",
        bias_initializer="zeros",
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.hidden_size = hidden_size
        self.filter_size = filter_size
        self.relu_dropout = relu_dropout
        self.activation = keras.activations.get(activation)
        self.output_activation = keras.activations.get(output_activation)
        self.use_bias = use_bias
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.bias_initializer = keras.initializers.get(bias_initializer)
        self.supports_masking = True
        self.inner_dense = keras.layers.Dense(
            filter_size,
            use_bias=use_bias,
            kernel_initializer=clone_initializer(self.kernel_initializer),
            bias_initializer=clone_initializer(self.bias_initializer),
            dtype=self.dtype_policy,
            name="inner",
        )
        self.inner_dropout = Dropout(relu_dropout, dtype=self.dtype_policy, name="relu_dropout")
        self.output_dense = keras.layers.Dense(
            hidden_size,
            use_bias=use_bias,
            kernel_initializer=clone_initializer(self.kernel_initializer),
            bias_initializer=clone_initializer(self.bias_initializer),
            dtype=self.dtype_policy,
            name="output",
        )

    def build(self, input_shape):
        self.inner_dense.build(input_shape)
        self.output_dense.build(tuple(input_shape[:-1]) + (self.filter_size,))
        self.built = True

    def call(self, inputs, mask=None, training=None):
        hidden = self.activation(self.inner_dense(inputs))
        hidden = self.inner_dropout(hidden, training=training)
        return self.output_activation(self.output_dense(hidden))

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[:-1]) + (self.hidden_size,)

    def compute_mask(self, inputs, mask=None):
        return mask

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "hidden_size": self.hidden_size,
                "filter_size": self.filter_size,
                "relu_dropout": self.relu_dropout,
                "activation": keras.activations.serialize(self.activation),
                "output_activation": keras.activations.serialize(self.output_activation),
                "use_bias": self.use_bias,
                "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
                "bias_initializer": keras.initializers.serialize(self.bias_initializer),
            }
        )
        return config


@keras.saving.register_keras_serializable(package="lisa_tf")
class BiLSTMSum(keras.layers.Layer):
    """Recurrent sub-layer: forward and backward LSTM outputs summed (DeepAtt Eqns 5-7).

    ```
    →h_t = LSTM(x_t, →h_{t-1})        (Eqn 5)
    ←h_t = LSTM(x_t, ←h_{t+1})        (Eqn 6)
    y_t  = →h_t + ←h_t                (Eqn 7)
    ```

    Built on ``keras.layers.Bidirectional(LSTM, merge_mode="sum")``. With a padding mask the LSTMs
    skip padded steps (the backward LSTM starts at each sentence's last real token, not at the end
    of the padded batch), and outputs at padded positions are set to zero.

    Args:
        units: int. LSTM width, equal to the output width (DeepAtt: the model width ``d``).
        dropout: float. Dropout on the LSTM inputs.
        recurrent_dropout: float. Dropout on the recurrent state.
        kernel_initializer: default orthogonal (DeepAtt §4 "Model Setup").
        recurrent_initializer: default orthogonal.
        **kwargs: other keyword arguments of ``keras.layers.Layer``.

    Call arguments:
        inputs: ``[batch, time, features]``.
        mask: optional ``[batch, time]`` padding mask, true on real tokens (right padding).
        training: bool.

    Example:
    ```python
    rnn = BiLSTMSum(units=16)
    mask = keras.ops.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], "bool")
    y = rnn(keras.random.normal((2, 5, 16)), mask=mask)   # [2, 5, 16]
    ```

    References:
        Tan et al. 2018, "Deep Semantic Role Labeling with Self-Attention", §3 Eqns 5-7, §4 "Model Setup".
    """

    def __init__(
        self,
        units: int,
        dropout: float = 0.0,
        recurrent_dropout: float = 0.0,
        kernel_initializer="orthogonal",
        recurrent_initializer="orthogonal",
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.units = units
        self.dropout = dropout
        self.recurrent_dropout = recurrent_dropout
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.recurrent_initializer = keras.initializers.get(recurrent_initializer)
        self.supports_masking = True
        lstm = keras.layers.LSTM(
            units,
            return_sequences=True,
            dropout=dropout,
            recurrent_dropout=recurrent_dropout,
            kernel_initializer=clone_initializer(self.kernel_initializer),
            recurrent_initializer=clone_initializer(self.recurrent_initializer),
            dtype=self.dtype_policy,
            name="lstm",
        )
        self.bidirectional = keras.layers.Bidirectional(lstm, merge_mode="sum", dtype=self.dtype_policy, name="bidirectional")

    def build(self, input_shape):
        self.bidirectional.build(input_shape)
        self.built = True

    def call(self, inputs, mask=None, training=None):
        mask = as_bool_mask(mask)
        outputs = self.bidirectional(inputs, mask=mask, training=training)
        return fill_padded_positions(outputs, mask)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[:-1]) + (self.units,)

    def compute_mask(self, inputs, mask=None):
        return mask

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "units": self.units,
                "dropout": self.dropout,
                "recurrent_dropout": self.recurrent_dropout,
                "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
                "recurrent_initializer": keras.initializers.serialize(self.recurrent_initializer),
            }
        )
        return config


@keras.saving.register_keras_serializable(package="lisa_tf")
class GLUConv(keras.layers.Layer):
    """Convolutional sub-layer: a gated linear unit ``(X∗W) ⊙ σ(X∗V)`` (DeepAtt Eqn 8).

    ``W`` and ``V`` are ``k × d × d`` filters (``k = 3`` in the paper), applied as one centred
    ("same") convolution with ``2d`` output channels split into the linear part and the gate.
    Padded positions are zeroed before the convolution, so a real token next to padding sees
    zeros there, exactly as at the edge of an unpadded sentence; outputs at padded positions are
    zero.

    Args:
        hidden_size: int. Output width ``d``.
        kernel_size: int. Filter width ``k`` (DeepAtt: 3).
        use_bias: bool. Biases in the convolution.
        kernel_initializer: default orthogonal (DeepAtt §4 "Model Setup").
        bias_initializer: default zeros.
        **kwargs: other keyword arguments of ``keras.layers.Layer``.

    Call arguments:
        inputs: ``[batch, time, features]``.
        mask: optional ``[batch, time]`` padding mask, true on real tokens.

    Example:
    ```python
    glu = GLUConv(hidden_size=16, kernel_size=3)
    mask = keras.ops.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], "bool")
    y = glu(keras.random.normal((2, 5, 16)), mask=mask)   # [2, 5, 16]
    ```

    References:
        - Tan et al. 2018, "Deep Semantic Role Labeling with Self-Attention", §3 Eqn 8, §4 "Model Setup".
        - Dauphin et al. 2017, "Language Modeling with Gated Convolutional Networks".
    """

    def __init__(
        self,
        hidden_size: int,
        kernel_size: int = 3,
        use_bias: bool = True,
        kernel_initializer="orthogonal",
        bias_initializer="zeros",
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.hidden_size = hidden_size
        self.kernel_size = kernel_size
        self.use_bias = use_bias
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.bias_initializer = keras.initializers.get(bias_initializer)
        self.supports_masking = True
        self.convolution = keras.layers.Conv1D(
            2 * hidden_size,
            kernel_size,
            padding="same",
            use_bias=use_bias,
            kernel_initializer=clone_initializer(self.kernel_initializer),
            bias_initializer=clone_initializer(self.bias_initializer),
            dtype=self.dtype_policy,
            name="convolution",
        )

    def build(self, input_shape):
        self.convolution.build(input_shape)
        self.built = True

    def call(self, inputs, mask=None):
        mask = as_bool_mask(mask)
        linear, gate = ops.split(self.convolution(fill_padded_positions(inputs, mask)), 2, axis=-1)
        return fill_padded_positions(linear * ops.sigmoid(gate), mask)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[:-1]) + (self.hidden_size,)

    def compute_mask(self, inputs, mask=None):
        return mask

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "hidden_size": self.hidden_size,
                "kernel_size": self.kernel_size,
                "use_bias": self.use_bias,
                "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
                "bias_initializer": keras.initializers.serialize(self.bias_initializer),
            }
        )
        return config


def _is_tensor_like(value) -> bool:
    """Whether Keras treats ``value`` (or every leaf of it) as a tensor call argument: backend and
    symbolic tensors, and arrays, which ``Layer.__call__`` converts to tensors."""
    leaves = keras.tree.flatten(value)
    return bool(leaves) and all(
        ops.is_tensor(leaf) or isinstance(leaf, keras.KerasTensor) or hasattr(leaf, "__array__") for leaf in leaves
    )


@keras.saving.register_keras_serializable(package="lisa_tf")
class ResidualNorm(keras.layers.Wrapper):
    """Residual connection, dropout and layer normalisation around a sub-layer.

    ```
    post-LN (default, DeepAtt Eqn 10 + LN):  Y = LN(X + dropout(SubLayer(X)))
    pre-LN (normalize_first=True):           Y = X + dropout(SubLayer(LN(X)))
    ```

    DeepAtt (§3 "Deep Topology": Eqn 10 ``Y = X + Sub-Layer(X)``, then "We then apply layer
    normalization after the residual connection") and LISA (§2.1 Eqn 1,
    ``s_t = LN(s_t + T(s_t))``) are post-LN; pre-LN (as in Tensor2Tensor's later defaults) is
    offered for deep stacks that train poorly post-LN.

    Every keyword argument of a call other than ``mask`` and ``training`` is forwarded to the
    sub-layer unchanged (e.g. :class:`~lisa_tf.layers.attention.SelfAttention`'s
    ``head_override``); a keyword its ``call()`` does not take is an error. ``mask`` and
    ``training`` are passed on when the sub-layer's ``call()`` takes them. When the sub-layer
    returns a tuple or list, the residual applies to its first element and the others are
    returned unchanged after it: ``(Y, *extras)``.

    Forwarded keywords travel through Keras as two call arguments, ``sublayer_tensors`` and
    ``sublayer_options``, filled by ``__call__``: Keras binds ``call()`` arguments by name and
    refuses one nested argument (such as a ``**kwargs`` catch-all) that mixes tensors with Python
    values, while a sub-layer may take both, e.g. a tensor ``head_override`` with the flag
    ``return_attention_scores=True``. Forwarded tensors are passed as given (no autocasting, so
    a float32 ``head_override`` stays float32); ``inputs`` is cast to the compute dtype.

    Args:
        layer: the wrapped sub-layer; its output (or first output) must have its input's shape.
        dropout: float. Residual dropout rate (DeepAtt: 0.2; LISA: 0.1).
        normalize_first: bool. Pre-LN instead of post-LN.
        epsilon: float. Layer-normalisation epsilon.
        **kwargs: other keyword arguments of ``keras.layers.Layer``.

    Call arguments:
        inputs: ``[batch, time, features]``.
        mask: optional ``[batch, time]`` padding mask, passed to the sub-layer; default the
            implicit Keras mask of ``inputs``.
        training: bool.
        **kwargs: passed to the sub-layer's ``call()``.

    Returns:
        ``[batch, time, features]``, or ``(outputs, *extras)`` when the sub-layer returns a tuple.

    Example:
    ```python
    block = ResidualNorm(FeedForward(16, 64), dropout=0.2)
    y = block(keras.random.normal((2, 5, 16)), training=True)      # [2, 5, 16]
    attention = ResidualNorm(SelfAttention(16, 4), dropout=0.2)
    y, weights = attention(keras.random.normal((2, 5, 16)), return_attention_scores=True)
    ```

    References:
        - Tan et al. 2018, "Deep Semantic Role Labeling with Self-Attention", §3 "Deep
          Topology", Eqn 10.
        - Strubell et al. 2018, "Linguistically-Informed Self-Attention for Semantic Role
          Labeling", §2.1 Eqn 1.
        - Ba et al. 2016, "Layer Normalization".
    """

    #: Arguments of ``call()`` that are ResidualNorm's own, never forwarded as they are.
    _OWN_CALL_ARGUMENTS = ("mask", "training", "inputs_mask", "sublayer_tensors", "sublayer_options")

    def __init__(self, layer, dropout: float = 0.0, normalize_first: bool = False, epsilon: float = 1e-6, **kwargs):
        # No autocasting of call arguments: forwarded tensors reach the sub-layer as given (its own
        # __call__ autocasts them if it autocasts); ``inputs`` is cast in call().
        super().__init__(layer, autocast=False, **kwargs)
        self.dropout = dropout
        self.normalize_first = normalize_first
        self.epsilon = epsilon
        self.supports_masking = True
        parameters = inspect.signature(layer.call).parameters.values()
        self._sublayer_arguments = {p.name for p in parameters if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
        self._sublayer_takes_any_keyword = any(p.kind is p.VAR_KEYWORD for p in parameters)
        self.residual_dropout = Dropout(dropout, dtype=self.dtype_policy, name="residual_dropout")
        self.layer_norm = keras.layers.LayerNormalization(epsilon=epsilon, dtype=self.dtype_policy, name="layer_norm")

    def __call__(self, inputs, *args, **kwargs):
        forwarded = {name: kwargs.pop(name) for name in list(kwargs) if name not in self._OWN_CALL_ARGUMENTS}
        if not self._sublayer_takes_any_keyword:
            for name, value in forwarded.items():
                if name not in self._sublayer_arguments:
                    raise ValueError(
                        f"{type(self.layer).__name__}.call() takes no argument {name!r}, found {name}={value!r}"
                    )
        tensors = {name: value for name, value in forwarded.items() if _is_tensor_like(value)}
        options = {name: value for name, value in forwarded.items() if name not in tensors}
        if tensors:
            kwargs["sublayer_tensors"] = tensors
        if options:
            kwargs["sublayer_options"] = options
        return super().__call__(inputs, *args, **kwargs)

    def build(self, input_shape):
        super().build(input_shape)
        self.layer_norm.build(input_shape)
        self.built = True

    def call(self, inputs, mask=None, training=None, inputs_mask=None, sublayer_tensors=None, sublayer_options=None):
        # Keras fills ``mask`` with the implicit mask of ``inputs`` when ``inputs`` is the only
        # tensor argument, and ``inputs_mask`` when forwarded tensors are there too.
        mask = inputs_mask if mask is None else mask
        kwargs = {**(sublayer_tensors or {}), **(sublayer_options or {})}
        if "mask" in self._sublayer_arguments:
            kwargs["mask"] = mask
        if "training" in self._sublayer_arguments:
            kwargs["training"] = training
        inputs = ops.cast(inputs, self.compute_dtype)
        outputs = self.layer(self.layer_norm(inputs) if self.normalize_first else inputs, **kwargs)
        extras = ()
        if isinstance(outputs, (tuple, list)):
            outputs, extras = outputs[0], tuple(outputs[1:])
        outputs = inputs + ops.cast(self.residual_dropout(outputs, training=training), inputs.dtype)
        if not self.normalize_first:
            outputs = self.layer_norm(outputs)
        return (outputs, *extras) if extras else outputs

    def compute_mask(self, inputs, mask=None):
        return mask

    def get_config(self):
        config = super().get_config()
        config.update({"dropout": self.dropout, "normalize_first": self.normalize_first, "epsilon": self.epsilon})
        return config
