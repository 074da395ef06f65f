"""LISA and SA: linguistically-informed self-attention for SRL (Strubell et al. 2018).

One example per sentence, all its predicates at once (layout ``"sentence"``):

* **Input** (§2.1): word embeddings (GloVe) projected to the model width (a linear projection with
  bias, footnote 2), plus the sinusoidal timing signal, then dropout.
* **Encoder** (§2.1, Eqn 1): J layers, each a multi-head self-attention sub-layer and a feed-forward
  sub-layer of "two linear projections each followed by leaky ReLU", each sub-layer wrapped
  post-LN as ``LN(x + dropout(f(x)))`` — the paper's Eqn 1 ("add the output ... to the initial
  representation and apply layer normalization"). The authors' later code normalises first
  (pre-LN); we follow the paper's equation (:class:`~lisa_tf.layers.sublayers.ResidualNorm` with
  ``normalize_first=False``).
* **Joint POS/predicate classifier** (§2.3) on the output of layer ``pos_layer`` (0-based): a
  linear classifier over the joint label space (every POS tag plus ``TAG:PREDICATE``). A token is
  a predicted predicate when its most probable joint label ends in ``:PREDICATE``; its predicted
  POS tag is that label's tag part.
* **Syntactically-informed self-attention** (§2.2, Eqns 4-5): a biaffine arc scorer on the output
  of layer ``parse_layer`` gives ``A_parse = softmax(Q_parse U K_parseᵀ)``; in layer
  ``parse_attention_layer`` the attention head ``parse_head`` uses ``A_parse`` instead of its own
  softmax, averaging its own value projection. The authors' code places them as the paper's
  Eqn 4 does (the parse is predicted from the input of the syntactic layer): parse from layer 4's
  output, attention in layer 5 (0-based, 12 layers). Training clamps the head to the gold parse
  (one-hot gold heads, teacher forcing, §2.5); at test time it uses the predicted *soft*
  distribution ``A_parse`` (as the authors' code) or, with ``inject_parse=True``, the one-hot heads
  of ``features["heads"]`` (an external or gold parse, §3 "+D&M"/"+Gold"). Dependency labels are
  scored by a per-label bilinear scorer on (dependent, head) representations of the same layer,
  conditioned on the gold head in training (Eqn 7) and on the predicted/injected head at test.
* **SRL** (§2.4, Eqn 6): the final representations go through a predicate MLP and a role MLP,
  and a bilinear ``U`` scores every (predicate, token, role). Training scores the gold predicates
  (teacher forcing, ``predicate_positions``); test scores every token as a candidate predicate
  ([B, T, T, roles]) and keeps the rows of the predicted predicates.
* **Loss** (Eqn 7): SRL + joint POS/predicate + λ1·arc + λ2·dependency label, each a masked
  softmax cross-entropy averaged over real tokens (SRL: over real (predicate, token) pairs), with
  label smoothing on the label-space softmaxes (not on the arc softmax, whose classes are tokens).
* **SA** (``kind = "sa"`` or ``syntax = false``): the same model with no parse scorer, no parse
  losses and an ordinary attention head.
* **Gold-predicate mode** (``gold_predicates = true``; §4, Table 2): layout ``"predicate"``, one
  example per (sentence, predicate) with a predicate-indicator embedding concatenated to the word
  embedding (He et al. 2017), i.e. the sentence is re-encoded for each predicate; the SRL scorer
  pairs the example's predicate with every token.

Decoding: constrained Viterbi over BIO with transition log-probabilities from the training data
(:meth:`SrlModel.decode_tags`) or argmax.
"""

from __future__ import annotations

from typing import Optional, Sequence

import keras
import numpy as np
import tensorflow as tf

from data_pipeline.vocab import PREDICATE_SUFFIX

from lisa_tf.layers.attention import SelfAttention
from lisa_tf.layers.biaffine import BiaffineArcScorer, BilinearLabelScorer
from lisa_tf.layers.dropout import Dropout
from lisa_tf.layers.sublayers import FeedForward, ResidualNorm
from lisa_tf.layers.timing_signal import TimingSignal
from lisa_tf.models.base import SrlModel
from lisa_tf.training.losses import masked_cross_entropy, per_replica


def joint_label_maps(joint_labels: Sequence[str], pos_labels: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """For each joint POS/predicate label: is it a predicate label, and the id of its POS tag.

    Args:
        joint_labels: ``Vocabularies.joint_pos_predicate.entries`` (``TAG`` or ``TAG:PREDICATE``).
        pos_labels: ``Vocabularies.pos.entries``.

    Returns:
        ``(is_predicate [J] bool, pos_id [J] int32)``.

    Raises:
        ValueError: a joint label whose tag is not in the POS vocabulary (the vocabularies were
            not built from the same data).
    """
    pos_index = {tag: i for i, tag in enumerate(pos_labels)}
    is_predicate = np.zeros(len(joint_labels), bool)
    pos_id = np.zeros(len(joint_labels), np.int32)
    for j, label in enumerate(joint_labels):
        tag = label
        if label.endswith(PREDICATE_SUFFIX):
            is_predicate[j] = True
            tag = label[: -len(PREDICATE_SUFFIX)]
        if tag not in pos_index:
            raise ValueError(
                f"joint POS/predicate label {label!r}: expected its tag {tag!r} in the POS vocabulary "
                f"({len(pos_labels)} tags), found none"
            )
        pos_id[j] = pos_index[tag]
    return is_predicate, pos_id


class Lisa(SrlModel):
    """LISA (``config.syntax`` and ``kind == "lisa"``) or SA (otherwise). See the module docstring.

    Args:
        config: :class:`lisa_tf.config.ModelConfig` (``num_layers``, ``hidden_size``, ``num_heads``,
            ``filter_size``, ``pos_layer``, ``parse_layer``, ``parse_attention_layer``,
            ``parse_head``, ``parse_mlp_size``, ``dep_label_mlp_size``, ``srl_mlp_size``,
            ``parse_loss_weight`` (λ1), ``dep_label_loss_weight`` (λ2), ``syntax``,
            ``gold_predicates``, dropouts, ``label_smoothing``, ``decode``).
        vocab_size: word vocabulary size.
        srl_labels: BIO tags in id order.
        joint_labels: joint POS/predicate labels in id order.
        pos_labels: POS tags in id order.
        dep_labels: dependency labels in id order (may be empty: no label scorer then).
        embedding_matrix: GloVe rows for the vocabulary, or None.

    Call arguments:
        features: the feature dict of :mod:`data_pipeline.dataset` in the model's layout
            (``word_ids``, ``token_mask``; ``heads`` in training and for injection;
            ``predicate_positions``/``predicate_mask`` in training).
        training: bool. Teacher forcing (gold heads in the syntax head, gold predicates for SRL)
            and dropout.
        inject_parse: bool. At test time, fix the syntax head to one-hot ``features["heads"]``.
        candidates: ``"gold"`` (score the gold predicates) or ``"all"`` (every token); default
            ``"gold"`` in training, ``"all"`` otherwise. Sentence layout only.

    Returns:
        dict of float32 logits: ``srl_logits`` ([B, P, T, roles], [B, T, T, roles] for all
        candidates, or [B, T, roles] in the predicate layout), ``joint_logits`` [B, T, J]; with
        syntax ``arc_logits`` [B, T, T] and ``dep_logits`` [B, T, dep labels] (for the heads used:
        gold in training, injected or argmax of ``A_parse`` at test), and ``parse_heads`` [B, T]
        (those heads, as float32).

    References:
        Strubell et al. 2018, "Linguistically-Informed Self-Attention for Semantic Role Labeling",
        EMNLP, §2 (Eqns 1-7), §4.
    """

    def __init__(
        self,
        config,
        vocab_size: int,
        srl_labels: Sequence[str],
        joint_labels: Sequence[str],
        pos_labels: Sequence[str],
        dep_labels: Sequence[str] = (),
        embedding_matrix: Optional[np.ndarray] = None,
        **kwargs,
    ):
        super().__init__(srl_labels, decode=config.decode, **kwargs)
        self.config = config
        self.layout = "predicate" if config.gold_predicates else "sentence"
        self.predicts_predicates = self.layout == "sentence"
        self.uses_syntax = bool(config.syntax and config.kind == "lisa")
        if not joint_labels:
            raise ValueError("LISA/SA need POS tags in the training data (joint POS/predicate labels); found none")
        layers = config.num_layers
        if not 0 <= config.pos_layer < layers:
            raise ValueError(f"model.pos_layer must be in 0..{layers - 1}, found {config.pos_layer}")
        if self.uses_syntax:
            if not 0 <= config.parse_layer < config.parse_attention_layer < layers:
                raise ValueError(
                    "expected 0 <= model.parse_layer < model.parse_attention_layer < model.num_layers, found "
                    f"{config.parse_layer}, {config.parse_attention_layer}, {layers}"
                )
            if not 0 <= config.parse_head < config.num_heads:
                raise ValueError(f"model.parse_head must be in 0..{config.num_heads - 1}, found {config.parse_head}")
        is_predicate, pos_id = joint_label_maps(joint_labels, pos_labels)
        # Plain tuples: Keras does not track them as state.
        self._predicate_label_flags = tuple(float(f) for f in is_predicate)
        self._joint_to_pos = tuple(int(i) for i in pos_id)
        self.num_dep_labels = len(dep_labels)

        hidden = config.hidden_size
        normal = keras.initializers.RandomNormal(stddev=config.embedding_size**-0.5)
        self.words = keras.layers.Embedding(
            vocab_size,
            config.embedding_size,
            embeddings_initializer=keras.initializers.Constant(embedding_matrix) if embedding_matrix is not None else normal,
            name="word_embedding",
        )
        self.predicate_embedding = None
        if self.layout == "predicate":
            self.predicate_embedding = keras.layers.Embedding(
                2, config.embedding_size, embeddings_initializer=normal, name="predicate_indicator_embedding"
            )
        self.input_projection = keras.layers.Dense(hidden, name="input_projection")
        self.timing = TimingSignal(name="timing_signal")
        self.input_dropout = Dropout(config.residual_dropout)
        self.attention_blocks = []
        self.ffn_blocks = []
        for i in range(layers):
            attention = SelfAttention(
                hidden, config.num_heads, dropout=config.attention_dropout, use_bias=True, name=f"attention_{i}"
            )
            ffn = FeedForward(
                hidden,
                config.filter_size,
                relu_dropout=config.relu_dropout,
                activation="leaky_relu",
                output_activation="leaky_relu",
                name=f"ffn_{i}",
            )
            self.attention_blocks.append(ResidualNorm(attention, dropout=config.residual_dropout, name=f"self_attention_{i}"))
            self.ffn_blocks.append(ResidualNorm(ffn, dropout=config.residual_dropout, name=f"feed_forward_{i}"))
        self.joint_classifier = keras.layers.Dense(len(joint_labels), dtype="float32", name="joint_pos_predicate")
        self.arc_scorer = self.dep_label_scorer = None
        if self.uses_syntax:
            self.arc_scorer = BiaffineArcScorer(config.parse_mlp_size, dropout=config.residual_dropout, name="parse_arcs")
            if self.num_dep_labels:
                # all_pairs=True, then the head's column is picked in call(): the same scores and
                # weights as the aligned mode, whose ``...``-subscript einsum has a gradient two
                # orders of magnitude slower in TensorFlow (seconds per step at 2500 tokens).
                self.dep_label_scorer = BilinearLabelScorer(
                    self.num_dep_labels,
                    mlp_dim=config.dep_label_mlp_size,
                    dropout=config.residual_dropout,
                    all_pairs=True,
                    name="parse_labels",
                )
        self.srl_scorer = BilinearLabelScorer(
            len(self.srl_labels), mlp_dim=config.srl_mlp_size, dropout=config.residual_dropout, all_pairs=True, name="srl_bilinear"
        )

    # ----------------------------------------------------------------------------------- encoder
    def _syntax_head(self, features, arc_logits, length, training, inject_parse):
        """The distribution replacing head ``parse_head``: gold/injected one-hot or soft ``A_parse``."""
        if training or inject_parse:
            if "heads" not in features:
                why = "training (teacher forcing)" if training else "inject_parse=True"
                raise ValueError(f"{why} needs dependency heads in the features ('heads'); the data has none")
            return tf.one_hot(tf.cast(features["heads"], tf.int32), length, dtype=tf.float32)
        return tf.nn.softmax(arc_logits, axis=-1)

    def encode(self, features, training=False, inject_parse=False):
        """Run the encoder; returns a dict with ``final``, ``pos`` and ``parse`` layer outputs,
        ``arc_logits`` (syntax only) and ``attention`` (per layer, [B, H, T, T] float32)."""
        mask = tf.cast(features["token_mask"], tf.bool)
        word_ids = features["word_ids"]
        length = tf.shape(word_ids)[1]
        x = self.words(word_ids)
        if self.predicate_embedding is not None:
            x = tf.concat([x, self.predicate_embedding(features["predicate_indicator"])], axis=-1)
        x = self.input_projection(x)
        x = x + tf.cast(self.timing(x), x.dtype)
        x = self.input_dropout(x, training=training)
        out = {"attention": []}
        for i, (attention, ffn) in enumerate(zip(self.attention_blocks, self.ffn_blocks)):
            override = None
            if self.uses_syntax and i == self.config.parse_attention_layer:
                override = self._syntax_head(features, out["arc_logits"], length, training, inject_parse)
            if override is not None:
                x, weights = attention(
                    x,
                    mask=mask,
                    training=training,
                    head_override=override,
                    head_override_index=self.config.parse_head,
                    return_attention_scores=True,
                )
            else:
                x, weights = attention(x, mask=mask, training=training, return_attention_scores=True)
            out["attention"].append(weights)
            x = ffn(x, mask=mask, training=training)
            if i == self.config.pos_layer:
                out["pos"] = x
            if self.uses_syntax and i == self.config.parse_layer:
                out["parse"] = x
                out["arc_logits"] = self.arc_scorer(x, mask=mask, training=training)
        out["final"] = x
        return out

    def attention_weights(self, features, inject_parse=False, training=False):
        """Attention weights of every layer, a list of ``[B, H, T, T]`` float32 tensors (for
        inspecting the syntax head; ``training=True`` shows the teacher-forced gold parse)."""
        return self.encode(features, training=training, inject_parse=inject_parse)["attention"]

    # ------------------------------------------------------------------------------------- model
    def call(self, features, training=False, inject_parse=False, candidates=None):
        encoded = self.encode(features, training=training, inject_parse=inject_parse)
        x = encoded["final"]
        outputs = {"joint_logits": self.joint_classifier(encoded["pos"])}
        if self.layout == "predicate":
            position = tf.cast(features["predicate_position"], tf.int32)
            predicates = tf.gather(x, position[:, None], batch_dims=1)  # [B, 1, d]
            outputs["srl_logits"] = self.srl_scorer(predicates, x, training=training)[:, 0]
        else:
            if candidates is None:
                candidates = "gold" if training else "all"
            if candidates == "gold":
                positions = tf.cast(features["predicate_positions"], tf.int32)
                predicates = tf.gather(x, positions, batch_dims=1)  # [B, P, d]
            elif candidates == "all":
                predicates = x
            else:
                raise ValueError(f"candidates must be 'gold' or 'all', found {candidates!r}")
            outputs["srl_logits"] = self.srl_scorer(predicates, x, training=training)  # Eqn 6
        if self.uses_syntax:
            arc_logits = encoded["arc_logits"]
            outputs["arc_logits"] = arc_logits
            if training or inject_parse:
                heads = tf.cast(features["heads"], tf.int32)
            else:
                heads = tf.argmax(arc_logits, axis=-1, output_type=tf.int32)
            outputs["parse_heads"] = tf.cast(heads, tf.float32)
            if self.dep_label_scorer is not None:
                parse = encoded["parse"]
                # [B, dependent, head, labels] → the column of each dependent's head: [B, T, labels]
                pairs = self.dep_label_scorer(parse, parse, training=training)
                outputs["dep_logits"] = tf.gather(pairs, heads, axis=2, batch_dims=2)
        return outputs

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        config = self.config
        token_mask = tf.cast(x["token_mask"], tf.bool)
        if self.layout == "predicate":
            srl_mask = token_mask
        else:
            srl_mask = tf.logical_and(tf.cast(x["predicate_mask"], tf.bool)[:, :, None], token_mask[:, None, :])
        loss = masked_cross_entropy(x["srl_tag_ids"], y_pred["srl_logits"], srl_mask, config.label_smoothing)
        loss += masked_cross_entropy(
            x["joint_pos_predicate_ids"], y_pred["joint_logits"], token_mask, config.label_smoothing
        )
        if self.uses_syntax:
            # Eqn 5: P(q = head(t)) = A_parse[t, q]; the classes are tokens, so no label smoothing
            # (it would put mass on padded tokens).
            loss += config.parse_loss_weight * masked_cross_entropy(x["heads"], y_pred["arc_logits"], token_mask)
            if "dep_logits" in y_pred and "dep_label_ids" in x:
                loss += config.dep_label_loss_weight * masked_cross_entropy(
                    x["dep_label_ids"], y_pred["dep_logits"], token_mask, config.label_smoothing
                )
        return per_replica(loss)

    # -------------------------------------------------------------------------------- prediction
    def predict_scores(self, features, inject_parse: bool = False, gold_predicates: Optional[bool] = None, **options):
        """float32 probabilities: ``srl_probs`` ([B, T, T, roles]: row i = token i as predicate; or
        [B, T, roles] in the predicate layout), ``joint_probs`` [B, T, J], ``predicate_probs`` [B, T];
        with syntax ``arc_probs`` [B, T, T] (one-hot of the injected heads when ``inject_parse``)
        and ``dep_label_probs`` [B, T, labels]; ``gold_predicate_flags`` [B, T] when
        ``gold_predicates`` (sentence layout: decode the gold predicates' rows)."""
        if options:
            raise TypeError(f"unexpected prediction options {sorted(options)}; expected inject_parse, gold_predicates")
        out = self(features, training=False, inject_parse=bool(inject_parse))
        joint = tf.nn.softmax(out["joint_logits"], axis=-1)
        flags = tf.constant(self._predicate_label_flags, tf.float32)
        scores = {
            "srl_probs": tf.nn.softmax(out["srl_logits"], axis=-1),
            "joint_probs": joint,
            "predicate_probs": tf.reduce_sum(joint * flags, axis=-1),
        }
        if self.uses_syntax:
            if inject_parse:
                length = tf.shape(out["arc_logits"])[-1]
                scores["arc_probs"] = tf.one_hot(tf.cast(features["heads"], tf.int32), length, dtype=tf.float32)
            else:
                scores["arc_probs"] = tf.nn.softmax(out["arc_logits"], axis=-1)
            if "dep_logits" in out:
                scores["dep_label_probs"] = tf.nn.softmax(out["dep_logits"], axis=-1)
        if gold_predicates is None:
            gold_predicates = False
        if gold_predicates and self.layout == "sentence":
            scores["gold_predicate_flags"] = tf.cast(features["predicate_indicator"], tf.float32)
        return scores

    def decode_scores(self, scores, features):
        """Tag ids: ``srl_tags`` (and in the sentence layout ``predicate_flags``, ``pos``, and with
        syntax ``heads``/``dep_labels``); see :mod:`lisa_tf.predict`."""
        lengths = tf.cast(features["length"], tf.int32)
        if self.layout == "predicate":
            return {"srl_tags": self.decode_tags(scores["srl_probs"], lengths)}
        token_mask = tf.cast(features["token_mask"], tf.bool)
        joint_ids = tf.argmax(scores["joint_probs"], axis=-1, output_type=tf.int32)
        if "gold_predicate_flags" in scores:
            flags = scores["gold_predicate_flags"] > 0.5
        else:
            flags = tf.gather(tf.constant(self._predicate_label_flags, tf.float32), joint_ids) > 0.5
        flags = tf.logical_and(flags, token_mask)
        # Decode only the rows of (predicted or gold) predicates.
        where = tf.where(flags)  # [N, 2]: (sentence, predicate token)
        rows = tf.gather_nd(scores["srl_probs"], where)  # [N, T, roles]
        row_tags = self.decode_tags(rows, tf.gather(lengths, where[:, 0]))
        shape = tf.shape(scores["srl_probs"], out_type=tf.int64)[:3]
        srl_tags = tf.scatter_nd(where, row_tags, shape)
        out = {
            "predicate_flags": tf.cast(flags, tf.int32),
            "srl_tags": srl_tags,
            "pos": tf.gather(tf.constant(self._joint_to_pos, tf.int32), joint_ids),
        }
        if "arc_probs" in scores:
            out["heads"] = tf.argmax(scores["arc_probs"], axis=-1, output_type=tf.int32)
        if "dep_label_probs" in scores:
            out["dep_labels"] = tf.argmax(scores["dep_label_probs"], axis=-1, output_type=tf.int32)
        return out
