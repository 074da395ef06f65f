"""The encoder every SRL model of the project shares: embeddings, timing signal, self-attention stack.

Input (DeepAtt §3 "Position Encoding", "Deep Topology"; LISA §2.1 and footnote 2; Park 2019 §3.1, Eqn 5)::

    e_t = [word(w_t) ; ctx_t ; predicate_mask(m_t)]  (the predicate part only when asked for; in
                                                      training w_t is <unk> with probability
                                                      word_dropout, lisa_tf.layers.word_dropout)
    ctx_t = γ · Σ_k softmax(w)_k · h_{t,k}           (with a contextual encoder: ELMo Eqn 1 over
                                                      the frozen encoder's layers h_k; "replace"
                                                      drops word(w_t))
    x_t = (e_t W_in) · s + b + timing(t)             (W_in when the widths differ, or always;
                                                      s = √d for N(0, d^-1/2) rows, 1 for GloVe)

then ``num_layers`` blocks, each two sub-layers wrapped post-LN as ``LN(x + dropout(f(x)))``
(DeepAtt Eqn 10; LISA Eqn 1): DeepAtt puts the non-linear sub-layer first (``order="sublayer_first"``),
LISA and Park's attentive modules put attention first (``"attention_first"``). The non-linear sub-layer
is a feed-forward network (``"ffn"``; activations are arguments: ReLU for DeepAtt and Park, leaky ReLU
after both projections for LISA), a BiLSTM with summed directions (``"rnn"``) or a width-3 GLU
convolution (``"cnn"``).

The *syntax head* (LISA §2.2, Eqns 4-5) is an argument, like ``attention_cls`` of Model Garden's
``TransformerScaffold``: a layer (the biaffine arc scorer) that reads the output of block
``syntax_layer`` and whose distribution replaces head ``syntax_attention_head`` of block
``syntax_attention_layer``. The caller may give that distribution instead (``parse=``: the one-hot
gold or injected parse); otherwise the scorer's softmax is used.
"""

from __future__ import annotations

import math
from typing import Optional

import keras
import numpy as np
import tensorflow as tf

from lisa_tf.layers.attention import SelfAttention
from lisa_tf.layers.dropout import Dropout
from lisa_tf.layers.initializers import clone_initializer
from lisa_tf.layers.scalar_mix import ScalarMix
from lisa_tf.layers.sublayers import BiLSTMSum, FeedForward, GLUConv, ResidualNorm
from lisa_tf.layers.timing_signal import TimingSignal
from lisa_tf.layers.word_dropout import WordDropout
from lisa_tf.models.contextual import POOLINGS, ContextualWordFeatures, mixed_word_vectors

#: Non-linear sub-layer kinds.
SUBLAYERS = ("ffn", "rnn", "cnn")
#: Orders of the two sub-layers of a block.
ORDERS = ("sublayer_first", "attention_first")
#: When the input embeddings are projected to the model width.
PROJECTIONS = ("auto", "always")
#: How contextual word vectors join the word embeddings.
CONTEXTUAL_MODES = ("concat", "replace")


def _choice(name: str, value: str, allowed) -> str:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {list(allowed)}, found {value!r}")
    return value


@keras.saving.register_keras_serializable(package="lisa_tf")
class SrlBackbone(keras.layers.Layer):
    """Embeddings + timing signal + a stack of self-attention blocks (see the module docstring).

    Args:
        vocabulary_size: rows of the word embedding table.
        embedding_size: word (and predicate-mask) embedding width.
        hidden_size: model width d.
        num_layers: number of blocks (0: the input layer only, as Park 2019 builds its own modules).
        num_heads: attention heads; ``key_dim`` per-head width (default ``d / heads``).
        filter_size: inner width of the feed-forward sub-layer.
        sublayer: ``"ffn"``, ``"rnn"`` or ``"cnn"``.
        order: ``"sublayer_first"`` (DeepAtt) or ``"attention_first"`` (LISA, Park 2019).
        ffn_activation, ffn_output_activation: the FFN's activations (LISA: ``"leaky_relu"`` for both).
        attention_bias: biases in the attention projections (LISA).
        predicate_indicator: concatenate a predicate-mask embedding to the word embedding.
        input_projection: ``"auto"`` (project when the embedding width differs from d) or ``"always"``.
        scale_embeddings: multiply the input by √d (DeepAtt's code, for N(0, d^-1/2) rows).
        embedding_stddev: standard deviation of the random embedding rows (default ``d^-1/2``).
        embedding_matrix: initial word embedding rows (GloVe), or None; not part of the config
            (the trained rows are weights).
        residual_dropout, attention_dropout, relu_dropout: dropout rates.
        word_dropout: in training, each real word id is replaced by the ``<unk>`` id with this
            probability before the word embedding (:class:`~lisa_tf.layers.word_dropout.WordDropout`),
            so the ``<unk>`` row that unseen words read is trained; 0 (default): no such layer. The
            contextual encoder reads the tokens, not the ids, and is not affected.
        syntax_head: a layer mapping ``(x [B, T, d], mask)`` to arc logits ``[B, T, T]``, or None.
        syntax_layer: the block whose output the syntax head reads (0-based).
        syntax_attention_layer: the block whose attention head it replaces (> ``syntax_layer``).
        syntax_attention_head: which head.
        contextual: ``""`` (none), ``"minilm"`` or a keras-hub BERT preset directory: a frozen encoder
            whose layers, mixed by :class:`~lisa_tf.layers.scalar_mix.ScalarMix`, join the input
            (:mod:`lisa_tf.models.contextual`).
        contextual_mode: ``"concat"`` (next to the word embedding) or ``"replace"`` (instead of it;
            the backbone then has no word embedding table).
        contextual_pooling: ``"first"`` or ``"mean"`` word piece per word.
        contextual_trainable, contextual_dropout, contextual_train_embeddings: fine-tune the encoder
            with the task (its dropout; its embeddings too) instead of keeping it frozen
            (:class:`~lisa_tf.models.contextual.ContextualWordFeatures`).
        **kwargs: other keyword arguments of ``keras.layers.Layer``.

    Call arguments:
        word_ids: int ``[B, T]``.
        predicate_indicator: int ``[B, T]`` (0/1); required with ``predicate_indicator=True``.
        padding_mask: bool ``[B, T]``, True on real tokens (default: ``word_ids != 0``).
        parse: optional float ``[B, T, T]`` distribution for the syntax head (gold or injected parse).
        use_parse: optional scalar bool tensor: the syntax head reads ``parse`` where it is True and its own
            distribution where it is False, chosen in the graph (one graph for both; None: ``parse`` is
            read whenever it is given).
        training: bool.
        return_attention: also return every block's attention weights.
        tokens: string ``[B, T]`` (the preprocessor's ``tokens``); the contextual encoder reads them.
        contextual_features: float ``[B, T, L + 1, width]``, the contextual encoder's output computed
            beforehand (the feature cache); used instead of running the encoder on ``tokens``.

    Returns:
        dict: ``sequence_output`` ``[B, T, d]``, ``layer_outputs`` (one ``[B, T, d]`` per block),
        with a syntax head ``arc_logits`` ``[B, T, T]``, and with ``return_attention`` ``attention``
        (one ``[B, H, T, T]`` per block).

    Example:
    ```python
    backbone = SrlBackbone(vocabulary_size=100, embedding_size=16, hidden_size=32, num_layers=2,
                           num_heads=4, filter_size=64)
    ids = tf.constant([[5, 7, 9, 0]])
    out = backbone(ids, tf.constant([[0, 1, 0, 0]]), padding_mask=ids > 0)
    out["sequence_output"].shape      # (1, 4, 32)
    ```

    References:
        - Tan et al. 2018, "Deep Semantic Role Labeling with Self-Attention", AAAI, §3.
        - Strubell et al. 2018, "Linguistically-Informed Self-Attention for Semantic Role Labeling",
          EMNLP, §2.1-2.2.
        - Park et al. 2019, "Selectively Connected Self-Attentions for Semantic Role Labeling", §3.1-3.2.
    """

    def __init__(
        self,
        vocabulary_size: int,
        embedding_size: int = 100,
        hidden_size: int = 200,
        num_layers: int = 10,
        num_heads: int = 8,
        filter_size: int = 800,
        sublayer: str = "ffn",
        order: str = "sublayer_first",
        ffn_activation="relu",
        ffn_output_activation=None,
        attention_bias: bool = False,
        key_dim: Optional[int] = None,
        predicate_indicator: bool = True,
        input_projection: str = "auto",
        scale_embeddings: bool = True,
        embedding_stddev: Optional[float] = None,
        embedding_matrix: Optional[np.ndarray] = None,
        residual_dropout: float = 0.2,
        attention_dropout: float = 0.1,
        relu_dropout: float = 0.1,
        word_dropout: float = 0.0,
        syntax_head=None,
        syntax_layer: int = 0,
        syntax_attention_layer: int = 1,
        syntax_attention_head: int = 0,
        contextual: str = "",
        contextual_mode: str = "concat",
        contextual_pooling: str = "first",
        contextual_trainable: bool = False,
        contextual_dropout: Optional[float] = None,
        contextual_train_embeddings: bool = False,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.vocabulary_size = vocabulary_size
        self.embedding_size = embedding_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.num_heads = num_heads
        self.filter_size = filter_size
        self.sublayer = _choice("sublayer", sublayer, SUBLAYERS)
        self.order = _choice("order", order, ORDERS)
        self.ffn_activation = ffn_activation
        self.ffn_output_activation = ffn_output_activation
        self.attention_bias = attention_bias
        self.key_dim = key_dim
        self.use_predicate_indicator = predicate_indicator
        self.input_projection = _choice("input_projection", input_projection, PROJECTIONS)
        self.scale_embeddings = scale_embeddings
        self.embedding_stddev = embedding_stddev
        self.residual_dropout = residual_dropout
        self.attention_dropout = attention_dropout
        self.relu_dropout = relu_dropout
        self.word_dropout = word_dropout
        self.syntax_head = syntax_head
        self.syntax_layer = syntax_layer
        self.syntax_attention_layer = syntax_attention_layer
        self.syntax_attention_head = syntax_attention_head
        self.contextual = contextual
        self.contextual_mode = _choice("contextual_mode", contextual_mode, CONTEXTUAL_MODES)
        self.contextual_pooling = _choice("contextual_pooling", contextual_pooling, POOLINGS)
        self.contextual_trainable = contextual_trainable
        self.contextual_dropout = contextual_dropout
        self.contextual_train_embeddings = contextual_train_embeddings
        if syntax_head is not None:
            if not 0 <= syntax_layer < syntax_attention_layer < num_layers:
                raise ValueError(
                    "expected 0 <= syntax_layer < syntax_attention_layer < num_layers, found "
                    f"{syntax_layer}, {syntax_attention_layer}, {num_layers}"
                )
            if not 0 <= syntax_attention_head < num_heads:
                raise ValueError(f"syntax_attention_head must be in 0..{num_heads - 1}, found {syntax_attention_head}")

        # The authors' code multiplies N(0, d^-1/2)-initialised embeddings by √d (unit variance).
        self.input_scale = math.sqrt(hidden_size) if scale_embeddings else 1.0
        stddev = embedding_stddev if embedding_stddev is not None else hidden_size**-0.5
        normal = keras.initializers.RandomNormal(stddev=stddev)
        self.encoder = self.mix = None
        width = 0
        if contextual:
            self.encoder = ContextualWordFeatures(
                contextual, pooling=contextual_pooling, trainable=contextual_trainable,
                dropout=contextual_dropout if contextual_trainable else None,
                train_embeddings=contextual_train_embeddings, name="contextual_encoder")
            self.mix = ScalarMix(self.encoder.num_layers, name="contextual_mix")
            width += self.encoder.width
        self.words = None
        if not contextual or contextual_mode == "concat":
            self.words = keras.layers.Embedding(
                vocabulary_size,
                embedding_size,
                embeddings_initializer=(
                    keras.initializers.Constant(embedding_matrix) if embedding_matrix is not None else clone_initializer(normal)
                ),
                name="word_embedding",
            )
            width += embedding_size
        self.predicate_mask = (
            keras.layers.Embedding(2, embedding_size, embeddings_initializer=clone_initializer(normal), name="predicate_mask")
            if predicate_indicator
            else None
        )
        width += embedding_size if predicate_indicator else 0
        project = input_projection == "always" or width != hidden_size
        self.project = keras.layers.Dense(hidden_size, use_bias=False, name="input_projection") if project else None
        self.timing = TimingSignal(name="timing_signal")
        self.input_dropout = Dropout(residual_dropout)
        self.blocks = [self._block(i) for i in range(num_layers)]
        # Only at a positive rate with a word embedding: at the default 0 the backbone has no such layer
        # and no seed state to save.
        self.unknown_words = (WordDropout(word_dropout, name="unknown_words")
                              if word_dropout > 0 and self.words is not None else None)
        # Created here rather than in build(): tasks may run embed()/run_block() without __call__.
        self.input_bias = self.add_weight(name="input_bias", shape=(hidden_size,), initializer="zeros")
        self.built = True

    def _nonlinear(self, i: int):
        if self.sublayer == "ffn":
            return FeedForward(
                self.hidden_size,
                self.filter_size,
                relu_dropout=self.relu_dropout,
                activation=self.ffn_activation,
                output_activation=self.ffn_output_activation,
                name=f"ffn_{i}",
            )
        if self.sublayer == "rnn":
            return BiLSTMSum(self.hidden_size, name=f"bilstm_{i}")
        return GLUConv(self.hidden_size, kernel_size=3, name=f"glu_{i}")

    def _block(self, i: int) -> tuple:
        attention = SelfAttention(
            self.hidden_size,
            self.num_heads,
            key_dim=self.key_dim,
            dropout=self.attention_dropout,
            use_bias=self.attention_bias,
            name=f"attention_{i}",
        )
        nonlinear = ResidualNorm(self._nonlinear(i), dropout=self.residual_dropout, name=f"nonlinear_{i}")
        attention = ResidualNorm(attention, dropout=self.residual_dropout, name=f"self_attention_{i}")
        return (nonlinear, attention) if self.order == "sublayer_first" else (attention, nonlinear)

    def contextual_inputs(self, features: dict) -> dict:
        """The keyword arguments of :meth:`call` / :meth:`embed` the contextual encoder reads from a
        feature dict (``tokens``, and ``contextual_features`` when the data pipeline brings them
        from the cache); empty without an encoder."""
        if self.encoder is None:
            return {}
        inputs = {"tokens": features["tokens"]}
        if "contextual_features" in features:
            inputs["contextual_features"] = features["contextual_features"]
        return inputs

    def embed(self, word_ids, predicate_indicator=None, training=False, tokens=None, contextual_features=None):
        """The input layer: ``(e W_in) · s + b + timing``, then dropout; ``[B, T, d]``."""
        parts = []
        if self.words is not None:
            ids = self.unknown_words(word_ids, training=training) if self.unknown_words is not None else word_ids
            parts.append(self.words(ids))
        if self.encoder is not None:
            mixed = mixed_word_vectors(self.encoder, self.mix, word_ids, tokens, contextual_features, training)
            dtype = parts[0].dtype if parts else self.compute_dtype
            parts.append(tf.cast(mixed, dtype))
        if self.predicate_mask is not None:
            parts.append(self.predicate_mask(predicate_indicator))
        x = tf.concat(parts, axis=-1) if len(parts) > 1 else parts[0]
        if self.project is not None:
            x = self.project(x)
        x = x * self.input_scale + tf.cast(self.input_bias, x.dtype)
        x = x + tf.cast(self.timing(x), x.dtype)
        return self.input_dropout(x, training=training)

    def run_block(self, i: int, x, mask, training=False, head_override=None, return_attention=False):
        """Block ``i`` on ``x``; returns ``(output, attention weights or None)``."""
        weights = None
        for sublayer in self.blocks[i]:
            if isinstance(sublayer.layer, SelfAttention):
                options = {}
                if head_override is not None:
                    options.update(head_override=head_override, head_override_index=self.syntax_attention_head)
                if return_attention:
                    x, weights = sublayer(x, mask=mask, training=training, return_attention_scores=True, **options)
                else:
                    x = sublayer(x, mask=mask, training=training, **options)
            else:
                x = sublayer(x, mask=mask, training=training)
        return x, weights

    def call(self, word_ids, predicate_indicator=None, padding_mask=None, parse=None, training=False,
             return_attention=False, tokens=None, contextual_features=None, use_parse=None):
        mask = tf.cast(padding_mask, tf.bool) if padding_mask is not None else tf.not_equal(word_ids, 0)
        x = self.embed(word_ids, predicate_indicator, training=training, tokens=tokens,
                       contextual_features=contextual_features)
        out = {"layer_outputs": []}
        if return_attention:
            out["attention"] = []
        for i in range(self.num_layers):
            override = None
            if self.syntax_head is not None and i == self.syntax_attention_layer:
                if parse is not None and use_parse is None:
                    override = parse
                else:
                    override = tf.nn.softmax(out["arc_logits"], axis=-1)
                    if parse is not None:
                        override = tf.where(use_parse, tf.cast(parse, override.dtype), override)
            x, weights = self.run_block(i, x, mask, training, override, return_attention)
            out["layer_outputs"].append(x)
            if return_attention:
                out["attention"].append(weights)
            if self.syntax_head is not None and i == self.syntax_layer:
                out["arc_logits"] = self.syntax_head(x, mask=mask, training=training)
        out["sequence_output"] = x
        return out

    def get_config(self):
        config = super().get_config()
        config.update(
            vocabulary_size=self.vocabulary_size,
            embedding_size=self.embedding_size,
            hidden_size=self.hidden_size,
            num_layers=self.num_layers,
            num_heads=self.num_heads,
            filter_size=self.filter_size,
            sublayer=self.sublayer,
            order=self.order,
            ffn_activation=self.ffn_activation,
            ffn_output_activation=self.ffn_output_activation,
            attention_bias=self.attention_bias,
            key_dim=self.key_dim,
            predicate_indicator=self.use_predicate_indicator,
            input_projection=self.input_projection,
            scale_embeddings=self.scale_embeddings,
            embedding_stddev=self.embedding_stddev,
            residual_dropout=self.residual_dropout,
            attention_dropout=self.attention_dropout,
            relu_dropout=self.relu_dropout,
            word_dropout=self.word_dropout,
            syntax_head=keras.saving.serialize_keras_object(self.syntax_head) if self.syntax_head is not None else None,
            syntax_layer=self.syntax_layer,
            syntax_attention_layer=self.syntax_attention_layer,
            syntax_attention_head=self.syntax_attention_head,
            contextual=self.contextual,
            contextual_mode=self.contextual_mode,
            contextual_pooling=self.contextual_pooling,
            contextual_trainable=self.contextual_trainable,
            contextual_dropout=self.contextual_dropout,
            contextual_train_embeddings=self.contextual_train_embeddings,
        )
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        if config.get("syntax_head") is not None:
            config["syntax_head"] = keras.saving.deserialize_keras_object(config["syntax_head"])
        return cls(**config)


def backbone_from_config(config, vocabulary_size: int, embedding_matrix=None, name: str = "backbone", **form) -> SrlBackbone:
    """A backbone sized by a :class:`~lisa_tf.config.ModelConfig` (widths, depth, heads, dropouts,
    embedding scale); ``form`` gives the paper's form (``order``, ``sublayer``, activations, the
    syntax head, …) and overrides any of those."""
    arguments = dict(
        embedding_size=config.embedding_size,
        hidden_size=config.hidden_size,
        num_layers=config.num_layers,
        num_heads=config.num_heads,
        filter_size=config.filter_size,
        residual_dropout=config.residual_dropout,
        attention_dropout=config.attention_dropout,
        relu_dropout=config.relu_dropout,
        word_dropout=config.word_dropout,
        scale_embeddings=config.scale_embeddings,
        contextual=config.contextual,
        contextual_mode=config.contextual_mode,
        contextual_pooling=config.contextual_pooling,
        contextual_trainable=config.contextual_trainable,
        contextual_dropout=config.contextual_dropout,
        contextual_train_embeddings=config.contextual_train_embeddings,
    )
    arguments.update(form)
    return SrlBackbone(vocabulary_size, embedding_matrix=embedding_matrix, name=name, **arguments)

