"""DeepAtt: deep self-attention SRL (Tan et al. 2018).

One example per (sentence, predicate). Input per token (§3.3): word embedding ⊕ predicate-mask
embedding (projected to d when their widths do not add up to d), scaled by √d (the authors' code, for
embeddings initialised N(0, d^-1/2); ``model.scale_embeddings = false`` for GloVe rows, whose scale is
already fixed), plus a bias, plus the sinusoidal timing signal (§3.3,
Vaswani et al. 2017). Then N layers, each a non-linear sub-layer followed by a self-attention
sub-layer, every sub-layer wrapped as ``LN(x + dropout(f(x)))`` (§3.2, Eqn 7). The non-linear
sub-layer is an FFN ``ReLU(xW1)W2``, a BiLSTM (directions summed) or a GLU convolution of width 3
(§3.2). A softmax over BIO tags (§3.4), trained with label-smoothed cross-entropy (§4.1).
Decoding: argmax with the B's-label rule for invalid BIO, or constrained Viterbi (§4.1).
"""

from __future__ import annotations

import math
from typing import Optional

import keras
import numpy as np
import tensorflow as tf

from lisa_tf.layers.attention import SelfAttention
from lisa_tf.layers.dropout import Dropout
from lisa_tf.layers.sublayers import BiLSTMSum, FeedForward, GLUConv, ResidualNorm
from lisa_tf.layers.timing_signal import TimingSignal
from lisa_tf.models.base import SrlModel
from lisa_tf.training.losses import masked_cross_entropy, per_replica


class TokenEncoder(keras.layers.Layer):
    """Embeddings + timing signal + N [non-linear, attention] layers (DeepAtt §3; also Park 2019's
    embedding layer).

    Args:
        vocab_size, embedding_size: word embedding table; ``embedding_matrix`` initialises it (GloVe).
        hidden_size, num_heads, filter_size, num_layers, sublayer: DeepAtt sizes (§4.1).
        residual_dropout, attention_dropout, relu_dropout: dropout rates.
        scale_embeddings: multiply the input by √d (for N(0, d^-1/2) embeddings; off for GloVe).
    """

    def __init__(
        self,
        vocab_size: int,
        embedding_size: int = 100,
        hidden_size: int = 200,
        num_heads: int = 8,
        filter_size: int = 800,
        num_layers: int = 10,
        sublayer: str = "ffn",
        residual_dropout: float = 0.2,
        attention_dropout: float = 0.1,
        relu_dropout: float = 0.1,
        embedding_matrix: Optional[np.ndarray] = None,
        scale_embeddings: bool = True,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.hidden_size = hidden_size
        # The authors' code multiplies N(0, d^-1/2)-initialised embeddings by √d (unit variance).
        self.input_scale = math.sqrt(hidden_size) if scale_embeddings else 1.0
        normal = keras.initializers.RandomNormal(stddev=hidden_size**-0.5)
        self.words = keras.layers.Embedding(
            vocab_size,
            embedding_size,
            embeddings_initializer=keras.initializers.Constant(embedding_matrix) if embedding_matrix is not None else normal,
            name="word_embedding",
        )
        self.predicate_mask = keras.layers.Embedding(2, embedding_size, embeddings_initializer=normal, name="predicate_mask")
        self.project = (
            keras.layers.Dense(hidden_size, use_bias=False, name="input_projection")
            if 2 * embedding_size != hidden_size
            else None
        )
        self.timing = TimingSignal(name="timing_signal")
        self.input_dropout = Dropout(residual_dropout)
        self.blocks = []
        for i in range(num_layers):
            if sublayer == "ffn":
                inner = FeedForward(hidden_size, filter_size, relu_dropout=relu_dropout, name=f"ffn_{i}")
            elif sublayer == "rnn":
                inner = BiLSTMSum(hidden_size, name=f"bilstm_{i}")
            else:
                inner = GLUConv(hidden_size, kernel_size=3, name=f"glu_{i}")
            attention = SelfAttention(hidden_size, num_heads, dropout=attention_dropout, name=f"attention_{i}")
            self.blocks.append(
                (
                    ResidualNorm(inner, dropout=residual_dropout, name=f"nonlinear_{i}"),
                    ResidualNorm(attention, dropout=residual_dropout, name=f"self_attention_{i}"),
                )
            )

    def build(self, input_shape):
        self.input_bias = self.add_weight(name="input_bias", shape=(self.hidden_size,), initializer="zeros")
        super().build(input_shape)

    def call(self, word_ids, predicate_indicator, mask, training=False):
        x = tf.concat([self.words(word_ids), self.predicate_mask(predicate_indicator)], axis=-1)
        if self.project is not None:
            x = self.project(x)
        x = x * self.input_scale + tf.cast(self.input_bias, x.dtype)
        x = x + tf.cast(self.timing(x), x.dtype)
        x = self.input_dropout(x, training=training)
        for nonlinear, attention in self.blocks:
            x = nonlinear(x, mask=mask, training=training)
            x = attention(x, mask=mask, training=training)
        return x


class DeepAtt(SrlModel):
    """DeepAtt SRL model (Tan et al. 2018). See the module docstring.

    Args:
        config: :class:`lisa_tf.config.ModelConfig`.
        vocab_size: word vocabulary size; ``srl_labels``: BIO tags in id order.
        embedding_matrix: GloVe rows for the vocabulary, or None.

    Call arguments:
        features: the predicate-layout feature dict of :mod:`data_pipeline.dataset`
            (``word_ids``, ``predicate_indicator``, ``token_mask``; ``srl_tag_ids`` for the loss).

    Returns:
        ``{"srl_logits": [B, T, labels]}`` (float32).

    References:
        Tan et al. 2018, "Deep Semantic Role Labeling with Self-Attention", AAAI, §3-4.
    """

    layout = "predicate"

    def __init__(self, config, vocab_size: int, srl_labels, embedding_matrix=None, **kwargs):
        super().__init__(srl_labels, decode=config.decode, **kwargs)
        self.config = config
        self.encoder = TokenEncoder(
            vocab_size,
            embedding_size=config.embedding_size,
            hidden_size=config.hidden_size,
            num_heads=config.num_heads,
            filter_size=config.filter_size,
            num_layers=config.num_layers,
            sublayer=config.sublayer,
            residual_dropout=config.residual_dropout,
            attention_dropout=config.attention_dropout,
            relu_dropout=config.relu_dropout,
            embedding_matrix=embedding_matrix,
            scale_embeddings=config.scale_embeddings,
            name="encoder",
        )
        self.classifier = keras.layers.Dense(len(self.srl_labels), dtype="float32", name="srl_softmax")

    def call(self, features, training=False):
        mask = features["token_mask"]
        x = self.encoder(features["word_ids"], features["predicate_indicator"], mask, training=training)
        return {"srl_logits": self.classifier(x)}

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        loss = masked_cross_entropy(
            x["srl_tag_ids"], y_pred["srl_logits"], x["token_mask"], self.config.label_smoothing
        )
        return per_replica(loss)

    def predict_scores(self, features, **options):
        return {"srl_probs": tf.nn.softmax(self(features, training=False)["srl_logits"])}

    def decode_scores(self, scores, features):
        return {"srl_tags": self.decode_tags(scores["srl_probs"], features["length"])}
