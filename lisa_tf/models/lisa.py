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
import tensorflow as tf

from lisa_tf.layers.biaffine import BiaffineArcScorer, BilinearLabelScorer
from lisa_tf.models.backbone import backbone_from_config
from lisa_tf.models.base import SrlModel
from lisa_tf.models.losses import masked_cross_entropy, per_replica
from lisa_tf.models.predicate_identifier import joint_label_maps


def parse_chosen(inject_parse, given, own):
    """``given()`` where the parse is injected, ``own()`` where not: ``inject_parse`` a Python bool (only that
    one is built) or a scalar bool tensor (both are built and one is chosen in the graph)."""
    if not tf.is_tensor(inject_parse):
        return given() if inject_parse else own()
    return tf.where(inject_parse, given(), own())


@keras.saving.register_keras_serializable(package="lisa_tf")
class Lisa(SrlModel):
    """LISA (``config.syntax`` and ``kind == "lisa"``) or SA (otherwise). See the module docstring.

    Args:
        config: :class:`lisa_tf.config.ModelConfig` (``num_layers``, ``hidden_size``, ``num_heads``,
            ``filter_size``, ``pos_layer``, ``parse_layer``, ``parse_attention_layer``,
            ``parse_head``, ``parse_mlp_size``, ``dep_label_mlp_size``, ``srl_mlp_size``,
            ``parse_loss_weight`` (λ1), ``dep_label_loss_weight`` (λ2), ``syntax``,
            ``gold_predicates``, dropouts, ``label_smoothing``, ``decode``).
        words, srl_labels: see :class:`~lisa_tf.models.base.SrlModel`.
        joint_labels: joint POS/predicate labels in id order.
        pos_labels: POS tags in id order.
        dep_labels: dependency labels in id order (may be empty: no label scorer then).
        embedding_matrix: GloVe rows for the vocabulary, or None.

    Call arguments:
        features: the preprocessor's features in the model's layout (``word_ids``, ``token_mask``;
            ``heads`` in training and for injection; ``predicate_positions``/``predicate_mask`` in
            training).
        training: bool. Teacher forcing (gold heads in the syntax head, gold predicates for SRL)
            and dropout.
        inject_parse: bool. At test time, fix the syntax head to one-hot ``features["heads"]``. Or a
            scalar bool tensor, the choice made in the graph (``heads`` then always in the features): one
            graph that labels with and without a given parse (the export's signatures share it).
        candidates: ``"gold"`` (score the gold predicates) or ``"all"`` (every token); default
            ``"gold"`` in training, ``"all"`` otherwise. Sentence layout only.

    Returns:
        dict of float32 logits: ``srl_logits`` ([B, P, T, roles], [B, T, T, roles] for all
        candidates, or [B, T, roles] in the predicate layout), ``joint_logits`` [B, T, J]; with
        syntax ``arc_logits`` [B, T, T] and ``dep_logits`` [B, T, dep labels] (for the heads used:
        gold in training, injected or argmax of ``A_parse`` at test), and ``parse_heads`` [B, T]
        (those heads, as float32); with a sense head ``sense_logits`` ([B, P, senses], [B, T, senses]
        for all candidates, or [B, senses] in the predicate layout).

    References:
        Strubell et al. 2018, "Linguistically-Informed Self-Attention for Semantic Role Labeling",
        EMNLP, §2 (Eqns 1-7), §4.
    """

    @classmethod
    def model_layout(cls, config) -> str:
        return "predicate" if config.gold_predicates else "sentence"

    def __init__(self, config, words, srl_labels, joint_labels=(), pos_labels=(), dep_labels=(),
                 embedding_matrix=None, **kwargs):
        super().__init__(config, words, srl_labels, joint_labels, pos_labels, dep_labels, **kwargs)
        config = self.config
        self.predicts_predicates = self.layout == "sentence"
        self.uses_syntax = bool(config.syntax and config.kind == "lisa")
        if not self.joint_labels:
            raise ValueError("LISA/SA need POS tags in the training data (joint POS/predicate labels); found none")
        layers = config.num_layers
        if not 0 <= config.pos_layer < layers:
            raise ValueError(f"model.pos_layer must be in 0..{layers - 1}, found {config.pos_layer}")
        is_predicate, pos_id = joint_label_maps(self.joint_labels, self.pos_labels)
        # Plain tuples: Keras does not track them as state.
        self._predicate_label_flags = tuple(float(f) for f in is_predicate)
        self._joint_to_pos = tuple(int(i) for i in pos_id)
        self.num_dep_labels = len(self.dep_labels)

        arc_scorer = (
            BiaffineArcScorer(config.parse_mlp_size, dropout=config.residual_dropout, name="parse_arcs")
            if self.uses_syntax
            else None
        )
        self.backbone = backbone_from_config(
            config,
            len(self.words),
            embedding_matrix,
            sublayer="ffn",
            order="attention_first",
            ffn_activation="leaky_relu",  # §2.1: "two linear projections each followed by leaky ReLU"
            ffn_output_activation="leaky_relu",
            attention_bias=True,
            predicate_indicator=self.layout == "predicate",
            input_projection="always",  # footnote 2: a linear projection (with bias) of the embeddings
            scale_embeddings=False,
            embedding_stddev=config.embedding_size**-0.5,
            syntax_head=arc_scorer,
            syntax_layer=config.parse_layer,
            syntax_attention_layer=config.parse_attention_layer,
            syntax_attention_head=config.parse_head,
        )
        self.joint_classifier = keras.layers.Dense(len(self.joint_labels), dtype="float32", name="joint_pos_predicate")
        self.dep_label_scorer = None
        if self.uses_syntax and self.num_dep_labels:
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
    def _given_parse(self, features, training, inject_parse):
        """The one-hot gold/injected parse for the syntax head, or None (use the soft ``A_parse``)."""
        if not self.uses_syntax or not (training or tf.is_tensor(inject_parse) or inject_parse):
            return None
        if "heads" not in features:
            why = "training (teacher forcing)" if training else "inject_parse=True"
            raise ValueError(f"{why} needs dependency heads in the features ('heads'); the data has none")
        return tf.one_hot(tf.cast(features["heads"], tf.int32), tf.shape(features["word_ids"])[1], dtype=tf.float32)

    def encode(self, features, training=False, inject_parse=False, return_attention=False):
        """Run the backbone; returns a dict with ``final``, ``pos`` and ``parse`` layer outputs,
        ``arc_logits`` (syntax only) and, when asked, ``attention`` (per layer, [B, H, T, T])."""
        out = self.backbone(
            features["word_ids"],
            features.get("predicate_indicator") if self.layout == "predicate" else None,
            padding_mask=features["token_mask"],
            parse=self._given_parse(features, training, inject_parse),
            use_parse=None if training or not tf.is_tensor(inject_parse) else inject_parse,
            training=training,
            return_attention=return_attention,
            **self.backbone.contextual_inputs(features),
        )
        layers = out["layer_outputs"]
        encoded = {"final": out["sequence_output"], "pos": layers[self.config.pos_layer]}
        if self.uses_syntax:
            encoded.update(parse=layers[self.config.parse_layer], arc_logits=out["arc_logits"])
        if return_attention:
            encoded["attention"] = out["attention"]
        return encoded

    def attention_weights(self, features, inject_parse=False, training=False):
        """Attention weights of every layer, a list of ``[B, H, T, T]`` float32 tensors (for
        inspecting the syntax head; ``training=True`` shows the teacher-forced gold parse)."""
        return self.encode(features, training=training, inject_parse=inject_parse, return_attention=True)["attention"]

    # ------------------------------------------------------------------------------------- model
    def call(self, features, training=False, inject_parse=False, candidates=None):
        encoded = self.encode(features, training=training, inject_parse=inject_parse)
        x = encoded["final"]
        outputs = {"joint_logits": self.joint_classifier(encoded["pos"])}
        if self.layout == "predicate":
            position = tf.cast(features["predicate_position"], tf.int32)
            predicates = tf.gather(x, position[:, None], batch_dims=1)  # [B, 1, d]
            outputs["srl_logits"] = self.srl_scorer(predicates, x, training=training)[:, 0]
            self.with_sense_logits(outputs, predicates[:, 0])  # [B, senses]
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
            self.with_sense_logits(outputs, predicates)  # [B, P or T, senses]
        if self.uses_syntax:
            arc_logits = encoded["arc_logits"]
            outputs["arc_logits"] = arc_logits
            heads = parse_chosen(True if training else inject_parse, lambda: tf.cast(features["heads"], tf.int32),
                                 lambda: tf.argmax(arc_logits, axis=-1, output_type=tf.int32))
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
            predicate_mask = tf.ones_like(x["predicate_position"], tf.bool)
        else:
            predicate_mask = tf.cast(x["predicate_mask"], tf.bool)
            srl_mask = tf.logical_and(predicate_mask[:, :, None], token_mask[:, None, :])
        loss = masked_cross_entropy(x["srl_tag_ids"], y_pred["srl_logits"], srl_mask, config.label_smoothing)
        loss += self.sense_loss(x, y_pred, predicate_mask)
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
        inject_parse = inject_parse if tf.is_tensor(inject_parse) else bool(inject_parse)
        out = self(features, training=False, inject_parse=inject_parse)
        joint = tf.nn.softmax(out["joint_logits"], axis=-1)
        flags = tf.constant(self._predicate_label_flags, tf.float32)
        scores = {
            "srl_probs": tf.nn.softmax(out["srl_logits"], axis=-1),
            "joint_probs": joint,
            "predicate_probs": tf.reduce_sum(joint * flags, axis=-1),
        }
        if self.uses_syntax:
            length = tf.shape(out["arc_logits"])[-1]
            scores["arc_probs"] = parse_chosen(
                inject_parse, lambda: tf.one_hot(tf.cast(features["heads"], tf.int32), length, dtype=tf.float32),
                lambda: tf.cast(tf.nn.softmax(out["arc_logits"], axis=-1), tf.float32))
            if "dep_logits" in out:
                scores["dep_label_probs"] = tf.nn.softmax(out["dep_logits"], axis=-1)
        self.with_sense_scores(scores, out)
        if gold_predicates is None:
            gold_predicates = False
        if gold_predicates and self.layout == "sentence":
            scores["gold_predicate_flags"] = tf.cast(features["predicate_indicator"], tf.float32)
        return scores

    def decode_scores(self, scores, features, constraints: bool = True):
        """Tag ids: ``srl_tags`` (and in the sentence layout ``predicate_flags``, ``pos``, and with
        syntax ``heads``/``dep_labels``), with a sense head ``senses``/``sense_sources`` (sentence layout:
        [B, T], at the predicates' tokens); see :mod:`lisa_tf.labelling.batches` and :meth:`SrlModel.decode_frames`
        (``constraints``)."""
        lengths = tf.cast(features["length"], tf.int32)
        if self.layout == "predicate":
            return self.decode_predicate_rows(scores, features, constraints)
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
        sense_rows = tf.gather_nd(scores["sense_probs"], where) if "sense_probs" in scores else None
        frames = self.decode_frames(rows, tf.gather(lengths, where[:, 0]), tf.gather_nd(features["tokens"], where),
                                    sense_rows, constraints, tf.cast(where[:, 1], tf.int32))
        shape = tf.shape(scores["srl_probs"], out_type=tf.int64)[:3]
        out = {
            "predicate_flags": tf.cast(flags, tf.int32),
            "srl_tags": tf.scatter_nd(where, frames["srl_tags"], shape),
            "pos": tf.gather(tf.constant(self._joint_to_pos, tf.int32), joint_ids),
        }
        if "senses" in frames:
            out["senses"] = tf.tensor_scatter_nd_update(tf.fill(shape[:2], ""), where, frames["senses"])
            out["sense_sources"] = tf.scatter_nd(where, frames["sense_sources"], shape[:2])
        if "arc_probs" in scores:
            out["heads"] = tf.argmax(scores["arc_probs"], axis=-1, output_type=tf.int32)
        if "dep_label_probs" in scores:
            out["dep_labels"] = tf.argmax(scores["dep_label_probs"], axis=-1, output_type=tf.int32)
        return out
