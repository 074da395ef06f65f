"""Biaffine and bilinear scorers: LISA's parse attention (Eqn 4), dependency labels and roles (Eqn 6).

- :class:`BiaffineArcScorer` scores every (dependent, head) pair of a sentence,
  ``Q_parse U_heads K_parseᵀ`` plus a head bias (Strubell et al. 2018, §2.2, Eqn 4, after Dozat &
  Manning 2017); ``softmax`` over the head axis gives ``A_parse``, the distribution that replaces
  one attention head (see :class:`~lisa_tf.layers.attention.SelfAttention`) and whose row ``t`` is
  ``P(q = head(t) | X)`` (Eqn 5; the root attends to itself).
- :class:`BilinearLabelScorer` gives per-label bilinear scores ``x_aᵀ U_l x_b + W [x_a; x_b] + b``
  for aligned pairs (a dependent and its gold head → dependency label, §2.2) or for all pairs of
  two sequences at once (every predicate × every token → semantic role, §2.4 Eqn 6).

Scores are returned as float32 logits, so softmaxes and losses run in float32 under a mixed
precision policy; everything before the last cast runs in the compute dtype.
"""

from __future__ import annotations

import keras
from keras import ops

from lisa_tf.layers.dropout import Dropout
from lisa_tf.layers.initializers import clone_initializer
from lisa_tf.layers.masking import mask_logits


def _mlp(width, activation, initializer, dtype, name):
    return keras.layers.Dense(
        width, activation=activation, kernel_initializer=clone_initializer(initializer), dtype=dtype, name=name
    )


@keras.saving.register_keras_serializable(package="lisa_tf")
class BiaffineArcScorer(keras.layers.Layer):
    """Biaffine dependency-arc scores for every (dependent, head) pair (LISA Eqn 4).

    ```
    Q = f(X W_dep + b_dep)               dependent ("query") representations, [B, T, m]
    K = f(X W_head + b_head)             head ("key", parent) representations, [B, T, m]
    S[t, q] = Q_t U Kᵀ_q + K_q · u       (Eqn 4; u: the head bias of Dozat & Manning 2017)
    A_parse = softmax_q(S)               (Eqn 4), P(q = head(t)) = A_parse[t, q]   (Eqn 5)
    ```

    A dependent-only bias term would be the same for every candidate head of a row and cancel in
    the softmax over heads, so there is none. Padded heads get the logit
    :data:`~lisa_tf.layers.masking.MASK_LOGIT`: they get exactly zero probability and never enter
    a real token's softmax denominator. Rows of padded dependents are finite and should be masked
    out of the loss.

    Args:
        mlp_dim: int. Width ``m`` of the dependent and head MLPs (LISA's code: 500).
        activation: MLP activation (default leaky ReLU, as LISA's feed-forward layers).
        dropout: float. Dropout on the MLP outputs.
        use_head_bias: bool. Include the head bias ``K_q · u``.
        kernel_initializer: initializer of the MLP kernels (default orthogonal).
        bilinear_initializer: initializer of ``U`` and ``u`` (default zeros: the parse attention
            starts uniform over the real tokens).
        **kwargs: other keyword arguments of ``keras.layers.Layer``.

    Call arguments:
        inputs: ``[batch, time, features]``, the token representations ``S^(p-1)``.
        mask: optional ``[batch, time]`` padding mask, true on real tokens.
        training: bool.

    Returns:
        float32 logits ``[batch, time (dependent), time (head)]``.

    Example:
    ```python
    scorer = BiaffineArcScorer(mlp_dim=32)
    mask = keras.ops.array([[1, 1, 1, 0], [1, 1, 1, 1]], "bool")
    logits = scorer(keras.random.normal((2, 4, 16)), mask=mask)     # [2, 4, 4]
    a_parse = keras.ops.softmax(logits, axis=-1)                     # zero on padded heads
    ```

    References:
        - Strubell et al. 2018, "Linguistically-Informed Self-Attention for Semantic Role
          Labeling", §2.2, Eqns 4-5.
        - Dozat & Manning 2017, "Deep Biaffine Attention for Neural Dependency Parsing".
    """

    def __init__(
        self,
        mlp_dim: int = 500,
        activation="leaky_relu",
        dropout: float = 0.0,
        use_head_bias: bool = True,
        kernel_initializer="orthogonal",
        bilinear_initializer="zeros",
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.mlp_dim = mlp_dim
        self.activation = keras.activations.get(activation)
        self.dropout = dropout
        self.use_head_bias = use_head_bias
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.bilinear_initializer = keras.initializers.get(bilinear_initializer)
        self.dependent_mlp = _mlp(mlp_dim, self.activation, self.kernel_initializer, self.dtype_policy, "dependent_mlp")
        self.head_mlp = _mlp(mlp_dim, self.activation, self.kernel_initializer, self.dtype_policy, "head_mlp")
        self.mlp_dropout = Dropout(dropout, dtype=self.dtype_policy, name="mlp_dropout")
        self.supports_masking = True

    def build(self, input_shape):
        self.dependent_mlp.build(input_shape)
        self.head_mlp.build(input_shape)
        self.bilinear = self.add_weight(
            name="bilinear", shape=(self.mlp_dim, self.mlp_dim), initializer=clone_initializer(self.bilinear_initializer)
        )
        if self.use_head_bias:
            self.head_bias = self.add_weight(
                name="head_bias", shape=(self.mlp_dim,), initializer=clone_initializer(self.bilinear_initializer)
            )
        self.built = True

    def call(self, inputs, mask=None, training=None):
        queries = self.mlp_dropout(self.dependent_mlp(inputs), training=training)  # Q_parse
        keys = self.mlp_dropout(self.head_mlp(inputs), training=training)  # K_parse
        bilinear = ops.cast(self.bilinear, queries.dtype)
        scores = ops.einsum("btm,mn,bqn->btq", queries, bilinear, keys)  # Q U Kᵀ
        if self.use_head_bias:
            scores = scores + ops.einsum("bqn,n->bq", keys, ops.cast(self.head_bias, keys.dtype))[:, None, :]
        return mask_logits(ops.cast(scores, "float32"), mask)

    def compute_output_shape(self, input_shape):
        return (input_shape[0], input_shape[1], input_shape[1])

    def compute_mask(self, inputs, mask=None):
        # The output's rows are the dependents: they keep the tokens' padding mask.
        return mask

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "mlp_dim": self.mlp_dim,
                "activation": keras.activations.serialize(self.activation),
                "dropout": self.dropout,
                "use_head_bias": self.use_head_bias,
                "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
                "bilinear_initializer": keras.initializers.serialize(self.bilinear_initializer),
            }
        )
        return config


@keras.saving.register_keras_serializable(package="lisa_tf")
class BilinearLabelScorer(keras.layers.Layer):
    """Per-label bilinear scores ``s_l = x_aᵀ U_l x_b + W_l [x_a; x_b] + b_l`` (LISA Eqn 6, §2.2).

    ``x_a`` and ``x_b`` are optional MLP projections of the two inputs (LISA: predicate and role
    MLPs of 200 for SRL; label MLPs of 100 for dependency labels). Two ways to pair them:

    - ``all_pairs=False``: aligned pairs, ``left [..., d_a]`` with ``right [..., d_b]`` (same
      leading shape) → ``[..., num_labels]``. Dependency labels: the dependent's representation
      and its (gold) head's representation gathered per token → ``[B, T, labels]``. Leading
      axes broadcast, but the layer then materialises ``[..., labels, d_b]`` for the broadcast
      shape; to pair predicates with tokens use ``all_pairs=True``.
    - ``all_pairs=True``: every row of ``left [B, P, d_a]`` with every row of ``right
      [B, T, d_b]`` → ``[B, P, T, labels]``, i.e. Eqn 6's ``s_ft = s_predᵀ_f U s_role_t`` for all
      predicates ``f`` and tokens ``t`` of a batch at once. ``left`` is either the tokens
      themselves (P = T, every token a candidate predicate) or predicate vectors gathered at
      the predicates' positions (P = number of predicates).

    Labels are normalised by a softmax over the last axis, so no token is in any denominator and
    the layer takes no padding mask; padded rows must be masked out of the loss.

    Args:
        num_labels: int. Number of labels.
        mlp_dim: int or None. Width of the left and right MLPs; ``None``: no MLP, the inputs
            are used as they are.
        activation: MLP activation (default leaky ReLU).
        dropout: float. Dropout on the MLP outputs (or the inputs when there is no MLP).
        all_pairs: bool. See above.
        use_bias: bool. Include the linear term ``W [x_a; x_b]`` and the bias ``b``.
        kernel_initializer: initializer of the MLP kernels (default orthogonal).
        bilinear_initializer: initializer of ``U`` and ``W`` (default zeros).
        **kwargs: other keyword arguments of ``keras.layers.Layer``.

    Call arguments:
        left: ``[..., d_a]`` (aligned) or ``[batch, P, d_a]`` (all pairs); predicates / dependents.
        right: ``[..., d_b]`` (aligned) or ``[batch, T, d_b]`` (all pairs); tokens / heads.
        training: bool.

    Returns:
        float32 logits ``[..., num_labels]`` (aligned) or ``[batch, P, T, num_labels]``.

    Example:
    ```python
    tokens = keras.random.normal((2, 6, 16))
    roles = BilinearLabelScorer(num_labels=9, mlp_dim=8, all_pairs=True)
    scores = roles(tokens, tokens)               # [2, 6, 6, 9]: predicate × token × role
    labels = BilinearLabelScorer(num_labels=5, mlp_dim=8)
    heads = keras.ops.array([[0, 0, 1, 1, 2, 2], [1, 1, 1, 1, 1, 1]])
    head_vectors = keras.ops.take_along_axis(tokens, heads[..., None], axis=1)
    dep_scores = labels(tokens, head_vectors)    # [2, 6, 5]
    ```

    References:
        - Strubell et al. 2018, "Linguistically-Informed Self-Attention for Semantic Role
          Labeling", §2.2 (dependency labels), §2.4 Eqn 6 (roles).
        - Dozat & Manning 2017, "Deep Biaffine Attention for Neural Dependency Parsing".
    """

    def __init__(
        self,
        num_labels: int,
        mlp_dim: int | None = None,
        activation="leaky_relu",
        dropout: float = 0.0,
        all_pairs: bool = False,
        use_bias: bool = True,
        kernel_initializer="orthogonal",
        bilinear_initializer="zeros",
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.num_labels = num_labels
        self.mlp_dim = mlp_dim
        self.activation = keras.activations.get(activation)
        self.dropout = dropout
        self.all_pairs = all_pairs
        self.use_bias = use_bias
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.bilinear_initializer = keras.initializers.get(bilinear_initializer)
        self.left_mlp = self.right_mlp = None
        if mlp_dim is not None:
            self.left_mlp = _mlp(mlp_dim, self.activation, self.kernel_initializer, self.dtype_policy, "left_mlp")
            self.right_mlp = _mlp(mlp_dim, self.activation, self.kernel_initializer, self.dtype_policy, "right_mlp")
        self.input_dropout = Dropout(dropout, dtype=self.dtype_policy, name="mlp_dropout")
        self.supports_masking = True

    def build(self, left_shape, right_shape):
        left_dim, right_dim = left_shape[-1], right_shape[-1]
        if self.mlp_dim is not None:
            self.left_mlp.build(left_shape)
            self.right_mlp.build(right_shape)
            left_dim = right_dim = self.mlp_dim
        self.bilinear = self.add_weight(
            name="bilinear",
            shape=(self.num_labels, left_dim, right_dim),
            initializer=clone_initializer(self.bilinear_initializer),
        )
        if self.use_bias:
            self.left_linear = self.add_weight(
                name="left_linear", shape=(left_dim, self.num_labels), initializer=clone_initializer(self.bilinear_initializer)
            )
            self.right_linear = self.add_weight(
                name="right_linear", shape=(right_dim, self.num_labels), initializer=clone_initializer(self.bilinear_initializer)
            )
            self.bias = self.add_weight(name="bias", shape=(self.num_labels,), initializer="zeros")
        self.built = True

    def call(self, left, right, training=None):
        if self.mlp_dim is not None:
            left, right = self.left_mlp(left), self.right_mlp(right)
        left = self.input_dropout(left, training=training)
        right = self.input_dropout(right, training=training)
        bilinear = ops.cast(self.bilinear, left.dtype)
        if self.all_pairs:
            # s[b, f, t, l] = left[b, f]ᵀ U_l right[b, t]   (Eqn 6, every predicate f × token t)
            projected = ops.einsum("bfi,lij->bflj", left, bilinear)
            scores = ops.einsum("bflj,btj->bftl", projected, right)
        else:
            projected = ops.einsum("...i,lij->...lj", left, bilinear)
            scores = ops.sum(projected * ops.expand_dims(right, -2), axis=-1)
        if self.use_bias:
            left_term = ops.matmul(left, ops.cast(self.left_linear, left.dtype))
            right_term = ops.matmul(right, ops.cast(self.right_linear, right.dtype))
            if self.all_pairs:
                left_term, right_term = left_term[:, :, None, :], right_term[:, None, :, :]
            scores = scores + left_term + right_term + ops.cast(self.bias, scores.dtype)
        return ops.cast(scores, "float32")

    def compute_mask(self, inputs, mask=None):
        # Pairs of two sequences have no single token mask; padded pairs are masked in the loss.
        return None

    def compute_output_shape(self, left_shape, right_shape):
        if self.all_pairs:
            return (left_shape[0], left_shape[1], right_shape[1], self.num_labels)
        return tuple(right_shape[:-1]) + (self.num_labels,)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "num_labels": self.num_labels,
                "mlp_dim": self.mlp_dim,
                "activation": keras.activations.serialize(self.activation),
                "dropout": self.dropout,
                "all_pairs": self.all_pairs,
                "use_bias": self.use_bias,
                "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
                "bilinear_initializer": keras.initializers.serialize(self.bilinear_initializer),
            }
        )
        return config
