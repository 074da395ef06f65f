"""Selectively connected self-attentions for SRL (Park et al. 2019).

One example per (sentence, predicate), like DeepAtt. The network (§3, Figure 4):

1. **Embedding** (§3.1, Eqn 5): word embedding ⊕ predicate-mask embedding, projected to the model
   width ``d``, plus the sinusoidal position encoding: the input layer of the shared
   :class:`~lisa_tf.models.backbone.SrlBackbone` in DeepAtt's form (it also scales by √d and adds a
   bias, as DeepAtt's code does).
2. **Optional BiLSTM encoding layer** (§3.1, Eqn 6; ``config.bilstm_encoder``): forward and
   backward LSTM outputs summed, ``ev_s = →h_t + ←h_t``, wrapped as ``LN(x + dropout(ev_s))``.
3. **N attentive representation modules** (§3.2, Figure 2): multi-head self-attention (Eqns 7-8)
   then a fully connected sub-layer, each with a residual connection and layer normalisation,
   ``X_i = LN(A + FC(A))`` with ``A = LN(H + SelfAttn(H))``: the backbone's blocks in the
   ``"attention_first"`` order, run one at a time so the selective connection sits between them.
4. **Selective connection** (§3.3, Eqns 9-12) after every module: ``S_i = SC(X_i, S_{i-1})``,
   followed by "a residual connection followed by layer normalization" (§3.4):
   ``H_i = LN(X_i + dropout(S_i))``.
5. **A classifier on every layer** (§3.5, Eqn 13): ``p_i = softmax(W H_i)``; training sums or
   averages the per-layer cross-entropies ("multi-channel cross entropy loss"); inference averages
   the layers' label distributions ("average pooling"), then decodes them like DeepAtt (argmax or
   constrained Viterbi).

Choices where the paper is silent or ambiguous (each with a switch):

- **What feeds module i+1** (``next_input``). The paper can be read two ways (the layer's module
  docstring quotes the sentences): ``"state"`` (default) — module i+1 reads ``H_i = LN(X_i + S_i)``,
  so the selective connection sits *between* modules; ``"module"`` — modules chain on their own
  outputs ``X_i`` and the state only feeds the classifiers. ``"state"`` is chosen because §3.5 says
  "At each step, the model selectively takes the previously generated features as an input to the
  next", §3.4 says "each module is updated using the selective connection module", and the §4.3
  ablation describes removing the connection as changing how the *stack* is built ("the stack of
  attentive representation is constructed only with the fully connected layer followed by layer
  normalization"), which only makes sense if the connection is on the path between modules. With
  ``"module"`` the connection could not change what any module computes, only what the classifiers
  see. The topmost ``H_N`` is what §3.5 calls "the outputs of the topmost self-attention layer".
- **One selective connection for all layers** (``share_connection=True``). Eqns 9-12 index the
  states and gates by layer but write the weights ``W_z, U_z, W_g, U_g, W, U`` without a layer
  index, and §3.3 describes one "gated unit that selectively updates the latent feature S_i over the
  variable-depth model": one cell unrolled over depth, like a GRU over time. ``False`` gives each
  layer its own cell. (The layer normalisation after it is per layer, like every other LN.)
- **One classifier for all layers** (``share_classifier=True``). Eqn 13 writes a single softmax
  matrix ``W`` while §3.5 says "Every layer can generate the current label"; sharing ``W`` keeps all
  layers' distributions in one space, which is what averaging them at inference presumes.
- **Sum or mean of the layer losses** (``config.multichannel_loss``). The paper only says
  "multi-channel cross entropy loss" and does not say which; its log-likelihood
  ``Σ_{i=1}^N log p(y_i|x)`` (§3.5) is written over the tokens of a label sequence but with the
  depth's symbol ``N`` as the bound, which read literally is a *sum*. The default ``"mean"`` (the
  sum divided by N) keeps the loss on the scale of a single softmax, so gradient clipping at 1.0
  and learning rates tuned for DeepAtt transfer; ``"sum"`` is the literal reading.
- **Ablation** (``config.selective=False``, §4.3, Table 3 "SC N/A"): "Without the selective
  connection, the stack of attentive representation is constructed only with the fully connected
  layer followed by layer normalization": the selective connection, its initial state and the
  residual + LN around it are removed, so ``H_i = X_i``, the output of the module's own FC + LN.
  Per-layer classifiers, the multi-channel loss and average pooling stay, so the ablation isolates
  the connection.
- **Embedding combination.** §3.1 ends with "L × {ev_w ⊙ ev_p ⊙ ev_s}" with ⊙ defined as the
  element-wise product, while the same section says the word and predicate-mask vectors are
  *concatenated* and that positions are projected "to the same space" (the Transformer's *sum*). We
  follow the concatenate-and-add reading (as DeepAtt), and combine the BiLSTM output with its input
  by a residual sum + LN. §3.1's prose says the BiLSTM directions are "concatenated and applied max
  pooling", Eqn 6 says *summed*; we sum (Eqn 6).
- **Heads that do not divide the width.** §4.2 sets ``d = 100`` and ``h = 16`` with per-head
  projections ``W_i^Q ∈ R^{n×d/h}``; 100/16 is not an integer, so when ``d`` is not divisible by
  ``h`` each head gets ``⌈d/h⌉`` dimensions (the output projection maps back to ``d``).
- ``S_0`` is a fixed ``N(0, 1/s)`` vector, not trained (see
  :class:`~lisa_tf.layers.selective_connection.SelectiveConnectionInitialState`), with ``s = d``.
"""

from __future__ import annotations

import math
from typing import Optional

import keras
import tensorflow as tf

from lisa_tf.layers.dropout import Dropout
from lisa_tf.layers.selective_connection import SelectiveConnection, SelectiveConnectionInitialState
from lisa_tf.layers.sublayers import BiLSTMSum, ResidualNorm
from lisa_tf.models.backbone import backbone_from_config
from lisa_tf.models.base import SrlModel
from lisa_tf.models.losses import masked_cross_entropy, per_replica

#: Allowed values of ``next_input``.
NEXT_INPUTS = ("state", "module")


@keras.saving.register_keras_serializable(package="lisa_tf")
class SelectiveSRL(SrlModel):
    """Selective Connection SRL model (Park et al. 2019). See the module docstring.

    Args:
        config: :class:`lisa_tf.config.ModelConfig` (``embedding_size``, ``hidden_size``,
            ``num_heads``, ``filter_size`` = FC sub-layer width, ``num_layers`` = N, dropouts,
            ``label_smoothing``, ``decode``, ``selective``, ``bilstm_encoder``, ``multichannel_loss``).
        words, srl_labels, …: see :class:`~lisa_tf.models.base.SrlModel`.
        embedding_matrix: pre-trained rows for the vocabulary, or None.
        next_input: ``"state"`` (default; module i+1 reads ``LN(X_i + S_i)``) or ``"module"``
            (module i+1 reads ``X_i``). None: ``config.selective_next_input``.
            Irrelevant when ``config.selective`` is False.
        share_connection: one :class:`SelectiveConnection` for every layer (default) or one per
            layer. None: ``config.selective_shared_connection``.
        share_classifier: one softmax matrix for every layer (default) or one per layer.
            None: ``config.selective_shared_classifier``.

    Call arguments:
        features: the predicate-layout feature dict of :mod:`data_pipeline.dataset`
            (``word_ids``, ``predicate_indicator``, ``token_mask``; ``srl_tag_ids`` for the loss).

    Returns:
        ``{"srl_layer_logits": [N, B, T, labels], "srl_logits": [B, T, labels]}`` (float32); the
        second is the topmost layer's (Eqn 13). Predictions use the average of all layers'
        distributions (:meth:`predict_scores`). In training also the predicate identifier's
        ``joint_logits`` [B, T, J] (when the model has one).

    References:
        Park et al. 2019, "Selectively Connected Self-Attentions for Semantic Role Labeling",
        Applied Sciences 9(8):1716, §3 (Eqns 5-13), §4.2-4.3.
    """

    layout = "predicate"

    def __init__(
        self,
        config,
        words,
        srl_labels,
        *args,
        embedding_matrix=None,
        next_input: Optional[str] = None,
        share_connection: Optional[bool] = None,
        share_classifier: Optional[bool] = None,
        **kwargs,
    ):
        super().__init__(config, words, srl_labels, *args, **kwargs)
        config = self.config
        self.next_input = next_input if next_input is not None else config.selective_next_input
        if self.next_input not in NEXT_INPUTS:
            raise ValueError(f"next_input must be one of {NEXT_INPUTS}, found {self.next_input!r}")
        self.share_connection = bool(
            share_connection if share_connection is not None else config.selective_shared_connection
        )
        self.share_classifier = bool(
            share_classifier if share_classifier is not None else config.selective_shared_classifier
        )
        if config.multichannel_loss not in ("mean", "sum"):
            raise ValueError(f"multichannel_loss must be 'mean' or 'sum', found {config.multichannel_loss!r}")
        if config.num_layers < 1:
            raise ValueError(f"num_layers must be at least 1, found {config.num_layers}")
        d = config.hidden_size
        self.num_layers = config.num_layers

        # §3.1: word ⊕ predicate mask → d, + sinusoid; §3.2: N attentive representation modules
        # (self-attention, then FC), each sub-layer LN(x + f(x)).
        self.backbone = backbone_from_config(
            config,
            len(self.words),
            embedding_matrix,
            sublayer="ffn",
            order="attention_first",
            key_dim=None if d % config.num_heads == 0 else math.ceil(d / config.num_heads),
        )
        # §3.1 Eqn 6: optional BiLSTM encoding layer, directions summed.
        self.sequence_encoder = (
            ResidualNorm(BiLSTMSum(d, name="bilstm"), dropout=config.residual_dropout, name="bilstm_encoder")
            if config.bilstm_encoder
            else None
        )
        # §3.3-3.4: selective connection (Eqns 9-12), then residual + LN.
        if config.selective:
            self.initial_state = SelectiveConnectionInitialState(d, name="initial_state")
            count = 1 if self.share_connection else config.num_layers
            self.connections = [SelectiveConnection(name=f"selective_connection_{i}") for i in range(count)]
            self.connection_norms = [
                keras.layers.LayerNormalization(epsilon=1e-6, name=f"selective_connection_norm_{i}")
                for i in range(config.num_layers)
            ]
            self.state_dropout = Dropout(config.residual_dropout, name="selective_connection_dropout")
        else:
            self.initial_state = None
            self.connections = []
            self.connection_norms = []
            self.state_dropout = None
        # §3.5 Eqn 13: softmax over BIO tags on every layer.
        count = 1 if self.share_classifier else config.num_layers
        self.classifiers = [
            keras.layers.Dense(len(self.srl_labels), dtype="float32", name=f"srl_softmax_{i}") for i in range(count)
        ]
        # Finds predicates when none are given (lisa_tf.models.predicate_identifier); not in the paper.
        self.predicate_identifier = self.make_predicate_identifier(embedding_matrix)
        self.predicts_predicates = self.predicate_identifier is not None

    def call(self, features, training=False):
        mask = tf.cast(features["token_mask"], tf.bool)
        h = self.backbone.embed(features["word_ids"], features["predicate_indicator"], training=training,
                                **self.backbone.contextual_inputs(features))
        if self.sequence_encoder is not None:
            h = self.sequence_encoder(h, mask=mask, training=training)
        state = self.initial_state(h) if self.initial_state is not None else None  # S_0
        layer_logits = []
        for i in range(self.num_layers):
            x, _ = self.backbone.run_block(i, h, mask, training=training)  # X_i
            if state is not None:
                connection = self.connections[0 if self.share_connection else i]
                state = connection(x, state, padding_mask=mask)  # S_i, Eqns 9-12
                dropped = self.state_dropout(state, training=training)
                out = self.connection_norms[i](x + tf.cast(dropped, x.dtype))  # H_i = LN(X_i + S_i), §3.4
            else:
                out = x  # ablation (§4.3): the module's own FC + LN output
            h = out if self.next_input == "state" else x
            layer_logits.append(self.classifiers[0 if self.share_classifier else i](out))
        outputs = {"srl_layer_logits": tf.stack(layer_logits, axis=0), "srl_logits": layer_logits[-1]}
        if self.sense_head is not None:
            position = tf.cast(features["predicate_position"], tf.int32)
            self.with_sense_logits(outputs, tf.gather(out, position, batch_dims=1))  # the last H_i: [B, senses]
        if training and self.predicate_identifier is not None:
            outputs["joint_logits"] = self.predicate_identifier(features["word_ids"], padding_mask=mask, training=training)
        return outputs

    def layer_losses(self, features, outputs) -> list:
        """The cross-entropy of every layer's classifier (float32 scalars, padded tokens excluded)."""
        logits = outputs["srl_layer_logits"]
        return [
            masked_cross_entropy(
                features["srl_tag_ids"], logits[i], features["token_mask"], self.config.label_smoothing
            )
            for i in range(self.num_layers)
        ]

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        """Multi-channel cross-entropy (§3.5): the per-layer losses, averaged or summed (plus the
        predicate identifier's loss when the model has one)."""
        total = tf.add_n(self.layer_losses(x, y_pred))
        if self.config.multichannel_loss == "mean":
            total = total / float(self.num_layers)
        total += self.sense_loss(x, y_pred, tf.ones_like(x["predicate_position"], tf.bool))
        return per_replica(total + self.predicate_identifier_loss(x, y_pred))

    def predict_scores(self, features, **options):
        """``srl_probs`` [B, T, L]: the average of the layers' softmax distributions (§3.5)."""
        out = self(features, training=False)
        probs = tf.reduce_mean(tf.nn.softmax(out["srl_layer_logits"], axis=-1), axis=0)
        return self.with_sense_scores({"srl_probs": probs}, out)

    def decode_scores(self, scores, features, constraints: bool = True):
        return self.decode_predicate_rows(scores, features, constraints)
