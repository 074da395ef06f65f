"""Multi-head self-attention whose heads can be read out and one head replaced by a given distribution.

DeepAtt (Tan et al. 2018, §3, Eqns 1-4) and LISA (Strubell et al. 2018, §2.1, Eqns 2-3) use the
scaled dot-product multi-head self-attention of Vaswani et al. (2017). LISA's
syntactically-informed layer (§2.2, Eqns 4-5) keeps every head but one, whose attention
distribution ``A_parse`` comes from a biaffine parser (training: the gold parse; test: the
predicted or an injected parse) and is used "to compose a weighted average of the value
representations V_parse as in the other attention heads". :class:`SelfAttention` therefore takes
an optional ``head_override`` ``[batch, time, time]`` distribution and ``head_override_index``:
that head's softmax is replaced by the given distribution, and its own value projection is
averaged with it. (The index and the tensor are two arguments because Keras does not accept a
tuple mixing a Python int and a tensor as one call argument.)

The projections are ``keras.layers.Dense`` layers rather than a ``keras.layers.MultiHeadAttention``,
because replacing one head's distribution needs the per-head probabilities between the softmax and
the value average, and that layer has no hook for changing them. (``Dense`` multiplies a
``[batch, time, d]`` input as one ``[batch·time, d]`` matrix, so its kernel gradient is one matrix
product; an ``EinsumDense`` ``"btd,de->bte"`` is run by TensorFlow as a batched product against a
broadcast kernel, whose gradient is a ``[batch, d, e]`` product summed over the batch, which made
a DeepAtt training step about 4 % slower on CPU.)
"""

from __future__ import annotations

import keras
from keras import ops

from lisa_tf.layers.dropout import Dropout
from lisa_tf.layers.initializers import clone_initializer
from lisa_tf.layers.masking import masked_softmax


@keras.saving.register_keras_serializable(package="lisa_tf")
class SelfAttention(keras.layers.Layer):
    """Multi-head scaled dot-product self-attention with a replaceable head.

    For each head ``h`` (DeepAtt Eqns 1-2; LISA Eqns 2-3):

    ```
    Q_h, K_h, V_h = X W_h^Q, X W_h^K, X W_h^V
    A_h = softmax(d_k^-0.5 · Q_h K_h^T)          padded keys excluded, float32
    M_h = A_h V_h
    Y   = Concat(M_1, …, M_H) W                  (DeepAtt Eqns 3-4)
    ```

    With ``head_override=A_parse, head_override_index=p`` the ``p``-th distribution is
    ``A_parse`` instead of the softmax (LISA §2.2, Eqn 4 and "These attention weights are used to
    compose a weighted average of the value representations V_parse as in the other attention
    heads").

    Masking: padded keys get the logit :data:`~lisa_tf.layers.masking.MASK_LOGIT` before the
    softmax, so they receive exactly zero weight and never reach a real token's softmax
    denominator. Outputs at padded query positions are finite but meaningless. A given
    ``A_parse`` is used exactly as given: it should put zero mass on padded keys (a parser's
    masked softmax or one-hot heads do).

    Mixed precision: projections and the value average run in the compute dtype; the logits are
    cast to float32 before masking and softmax; the returned attention weights are float32, and
    a given ``head_override`` enters them in float32 without being rounded to the compute dtype.

    Args:
        hidden_size: int. Width ``d`` of the input and output.
        num_heads: int. Number of heads ``H``.
        key_dim: int. Per-head query/key width ``d_k``; default ``hidden_size // num_heads``.
        value_dim: int. Per-head value width ``d_v``; default ``key_dim``.
        dropout: float. Dropout rate on the attention weights (DeepAtt: 0.1), applied only to the
            weights used for the value average, not to the returned ones.
        use_bias: bool. Biases in the projections (DeepAtt/T2T: no; LISA footnote 2: yes).
        kernel_initializer: initializer of the projection matrices. Default orthogonal (DeepAtt
            §4 "Model Setup", "Initialization": all sub-layer weights are random orthogonal
            matrices); the per-head projections of all heads form one ``[d, H·d_k]`` matrix.
        bias_initializer: initializer of the biases.
        **kwargs: other keyword arguments of ``keras.layers.Layer``.

    Call arguments:
        inputs: ``[batch, time, hidden_size]``.
        mask: optional ``[batch, time]`` padding mask, true (non-zero) on real tokens; the
            implicit Keras mask of ``inputs`` is used when it is not given.
        head_override: optional ``[batch, time(query), time(key)]`` distribution (rows summing to
            1 over real keys) replacing the softmax of head ``head_override_index``.
        head_override_index: Python int or scalar int tensor in ``[0, num_heads)``; default 0.
        return_attention_scores: bool. Also return the attention weights
            ``[batch, num_heads, time(query), time(key)]`` (float32, after the override, before
            dropout).
        training: bool. Dropout on or off.

    Returns:
        ``[batch, time, hidden_size]``, or ``(outputs, attention_weights)``.

    Example:
    ```python
    x = keras.random.normal((2, 5, 16))
    mask = keras.ops.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], "bool")
    attention = SelfAttention(hidden_size=16, num_heads=4)
    y, weights = attention(x, mask=mask, return_attention_scores=True)   # [2,5,16], [2,4,5,5]
    # LISA: head 0 attends to each token's syntactic parent (here: token 0 for everyone).
    parents = keras.ops.one_hot(keras.ops.zeros((2, 5), "int32"), 5)
    y, weights = attention(x, mask=mask, head_override=parents, head_override_index=0,
                           return_attention_scores=True)
    ```

    References:
        - Tan et al. 2018, "Deep Semantic Role Labeling with Self-Attention", §3, Eqns 1-4; §4 "Model
          Setup".
        - Strubell et al. 2018, "Linguistically-Informed Self-Attention for Semantic Role
          Labeling", §2.1 Eqns 2-3, §2.2 Eqns 4-5.
        - Vaswani et al. 2017, "Attention Is All You Need", §3.2.
    """

    def __init__(
        self,
        hidden_size: int,
        num_heads: int,
        key_dim: int | None = None,
        value_dim: int | None = None,
        dropout: float = 0.0,
        use_bias: bool = False,
        kernel_initializer="orthogonal",
        bias_initializer="zeros",
        **kwargs,
    ):
        # Keras would cast every floating call argument to the compute dtype; a given head
        # distribution must reach the float32 attention weights unrounded, so the layer casts
        # ``inputs`` itself (its projections are sub-layers and still autocast their weights).
        super().__init__(autocast=False, **kwargs)
        if key_dim is None and hidden_size % num_heads:
            raise ValueError(
                f"hidden_size must be divisible by num_heads when key_dim is not given, "
                f"found hidden_size={hidden_size}, num_heads={num_heads}"
            )
        self.hidden_size = hidden_size
        self.num_heads = num_heads
        self.key_dim = key_dim if key_dim is not None else hidden_size // num_heads
        self.value_dim = value_dim if value_dim is not None else self.key_dim
        self.dropout = dropout
        self.use_bias = use_bias
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.bias_initializer = keras.initializers.get(bias_initializer)
        self.supports_masking = True

        def projection(width, name):
            return keras.layers.Dense(
                width,
                use_bias=use_bias,
                kernel_initializer=clone_initializer(self.kernel_initializer),
                bias_initializer=clone_initializer(self.bias_initializer),
                dtype=self.dtype_policy,
                name=name,
            )

        self.query_dense = projection(self.num_heads * self.key_dim, "query")
        self.key_dense = projection(self.num_heads * self.key_dim, "key")
        self.value_dense = projection(self.num_heads * self.value_dim, "value")
        self.output_dense = projection(self.hidden_size, "attention_output")
        # float32: it acts on the float32 attention weights.
        self.attention_dropout = Dropout(dropout, dtype="float32", name="attention_dropout")

    def build(self, input_shape):
        for dense in (self.query_dense, self.key_dense, self.value_dense):
            dense.build(input_shape)
        self.output_dense.build(tuple(input_shape[:-1]) + (self.num_heads * self.value_dim,))
        self.built = True

    def _scaled_query(self, inputs):
        """``d_k^-0.5 · (X W^Q + b^Q)`` with the scale applied to the ``[d, H·d_k]`` kernel and the bias
        instead of to the ``[batch, time, H·d_k]`` queries: the same values and gradients, and the
        multiply no longer grows with the batch."""
        dense, scale = self.query_dense, self.key_dim**-0.5
        query = ops.matmul(inputs, ops.cast(dense.kernel * scale, inputs.dtype))
        if dense.use_bias:
            query = query + ops.cast(dense.bias * scale, inputs.dtype)
        return query

    def _split_heads(self, x, width):
        """``[B, T, H·w]`` → ``[B, T, H, w]``."""
        shape = ops.shape(x)
        return ops.reshape(x, (shape[0], shape[1], self.num_heads, width))

    def call(
        self,
        inputs,
        mask=None,
        head_override=None,
        head_override_index=0,
        return_attention_scores=False,
        training=None,
    ):
        inputs = ops.cast(inputs, self.compute_dtype)
        query = self._split_heads(self._scaled_query(inputs), self.key_dim)
        key = self._split_heads(self.key_dense(inputs), self.key_dim)
        value = self._split_heads(self.value_dense(inputs), self.value_dim)

        # A_h = softmax(d_k^-0.5 Q_h K_h^T), in float32 with padded keys excluded.
        logits = ops.cast(ops.einsum("bqhd,bkhd->bhqk", query, key), "float32")
        weights = masked_softmax(logits, mask)

        if head_override is not None:
            index = head_override_index
            if isinstance(index, int) and not 0 <= index < self.num_heads:
                raise ValueError(f"head_override_index must be in [0, {self.num_heads}), found {index}")
            chosen = ops.equal(ops.arange(self.num_heads), ops.cast(index, "int32"))
            given = ops.cast(head_override, "float32")[:, None, :, :]
            weights = ops.where(chosen[None, :, None, None], given, weights)

        # M_h = A_h V_h; Y = Concat(M_1..M_H) W.
        dropped = self.attention_dropout(weights, training=training)
        context = ops.einsum("bhqk,bkhd->bqhd", ops.cast(dropped, value.dtype), value)
        shape = ops.shape(context)
        outputs = self.output_dense(ops.reshape(context, (shape[0], shape[1], self.num_heads * self.value_dim)))
        if return_attention_scores:
            return outputs, weights
        return outputs

    def compute_mask(self, inputs, mask=None):
        return mask

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "hidden_size": self.hidden_size,
                "num_heads": self.num_heads,
                "key_dim": self.key_dim,
                "value_dim": self.value_dim,
                "dropout": self.dropout,
                "use_bias": self.use_bias,
                "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
                "bias_initializer": keras.initializers.serialize(self.bias_initializer),
            }
        )
        return config
