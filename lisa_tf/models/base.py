"""What every SRL model of the project shares.

A model is a Keras task in keras-hub's sense: a :class:`~lisa_tf.models.preprocessor.SrlPreprocessor`
(``model.preprocessor``: tokens → features, in-graph, owning the word vocabulary), an
:class:`~lisa_tf.models.backbone.SrlBackbone` and the paper's heads. ``call`` takes the feature dict
the preprocessor returns and gives a dict of logits. Gold labels travel in the same dict (teacher
forcing needs them inside ``call``), so ``fit`` runs with ``y=None`` and ``compute_loss`` reads the
labels from ``x``. Prediction is split in two so ensembles can average probabilities:
``predict_scores(features)`` → float32 probabilities, ``decode_scores(scores, features)`` → tag ids
(argmax, or constrained Viterbi with transition log-probabilities kept in the model's weights).

Every model is serialisable: ``get_config`` holds the :class:`~lisa_tf.config.ModelConfig`, the word
vocabulary and the label vocabularies, so ``model.save("x.keras")`` and
``keras.saving.load_model("x.keras")`` (after ``import lisa_tf``) give the same predictions, with no
other file. The config carries no dtype policy: a model loads under the global policy (exports load
in float32 whatever the training policy was).
"""

from __future__ import annotations

import dataclasses
import types
from typing import Optional, Sequence

import keras
import numpy as np
import tensorflow as tf

from data_pipeline.vocab import OOV_ID, Vocabularies, Vocabulary

from lisa_tf.config import ConfigError, ModelConfig
from lisa_tf.decoding.frame_viterbi import CoreRoleTags, frame_viterbi_decode
from lisa_tf.decoding.sense_choice import SenseChoice
from lisa_tf.decoding.viterbi import bio_start_mask, bio_transition_mask, predicate_tag_id, viterbi_decode
from lisa_tf.models.backbone import backbone_from_config
from lisa_tf.models.contextual import encoders_in, saved_encoder
from lisa_tf.models.losses import masked_cross_entropy
from lisa_tf.models.predicate_identifier import PredicateIdentifier, joint_label_maps
from lisa_tf.models.preprocessor import SrlPreprocessor
from lisa_tf.models.sense_head import SenseHead, sense_loss


class SrlModel(keras.Model):
    """Base class: the preprocessor, serialisation, decoding and the BIO transition weights.

    Args:
        config: :class:`lisa_tf.config.ModelConfig` (or its dict).
        words: the word vocabulary in id order (``Vocabularies.words.entries``).
        srl_labels: the BIO tag strings in id order (``Vocabularies.srl.entries``).
        joint_labels, pos_labels, dep_labels: the other label vocabularies (LISA/SA read them; kept
            by every model so a saved model restores all its vocabularies).
        upos_labels: universal POS tags in id order (the parser tags them; empty for data without).
        sense_labels: the training data's rolesets in id order (``Vocabularies.senses.entries``); with
            them (and ``model.sense_loss_weight`` > 0) the model has a sense head
            (:class:`~lisa_tf.models.sense_head.SenseHead`, ``self.sense_head``), else ``None``.

    Subclasses take ``embedding_matrix`` (initial word embedding rows, GloVe, or None) as a keyword;
    it is not part of the config (the trained rows are weights).
    """

    #: ``"predicate"``: one example per (sentence, predicate); ``"sentence"``: all predicates at once.
    layout = "predicate"
    uses_syntax = False
    predicts_predicates = False

    def __init__(
        self,
        config,
        words: Sequence[str],
        srl_labels: Sequence[str],
        joint_labels: Sequence[str] = (),
        pos_labels: Sequence[str] = (),
        dep_labels: Sequence[str] = (),
        upos_labels: Sequence[str] = (),
        sense_labels: Sequence[str] = (),
        sense_lexicon: Optional[dict] = None,
        **kwargs,
    ):
        kwargs.pop("dtype", None)  # models load under the global policy (see the module docstring)
        super().__init__(**kwargs)
        if isinstance(config, dict) and "predicate_identifier_layers" not in config:
            config = {**config, "predicate_identifier_layers": 0}  # saved before models had one
        self.config = config if isinstance(config, ModelConfig) else ModelConfig(**config)
        # The vocabularies: plain lists of strings, held past Keras' attribute tracking, which wraps a list
        # attribute and walks its every row (tens of thousands of words) each time a model is built or loaded.
        for name, values in (("words", words), ("srl_labels", srl_labels), ("joint_labels", joint_labels),
                             ("pos_labels", pos_labels), ("dep_labels", dep_labels), ("upos_labels", upos_labels),
                             ("sense_labels", sense_labels)):
            object.__setattr__(self, name, list(values))
        self.sense_head = (SenseHead(len(self.sense_labels), name="sense_head")
                           if self.sense_labels and self.config.sense_loss_weight > 0 else None)
        # The word-form lexicon that narrows the head's choice to a word's rolesets (lisa_tf.decoding.sense_choice).
        # Plain data, held read-only and past Keras' attribute tracking: Keras walks every row of a list or
        # dict attribute when it tracks, saves and loads a model (seconds per model for the full frame
        # index's tens of thousands of forms); a mapping proxy is neither.
        lexicon = types.MappingProxyType(dict(sense_lexicon)) if self.sense_head is not None and sense_lexicon else None
        object.__setattr__(self, "sense_lexicon", lexicon)
        self.sense_choice = SenseChoice(**self.sense_lexicon, name="sense_choice") if self.sense_lexicon else None
        self.core_role_tags = CoreRoleTags(self.srl_labels)
        # The id of the predicate's own tag (B-V), which Viterbi decoding gives each predicate's token; None in
        # a label set without it, which then decodes without that pin.
        self.predicate_tag = predicate_tag_id(self.srl_labels)
        self.decode_mode = self.config.decode
        self.layout = self.model_layout(self.config)
        self.preprocessor = SrlPreprocessor(self.words, layout=self.layout, name="preprocessor")
        # Log-probabilities of tag transitions (−inf-like for invalid BIO), replaced by
        # set_transitions() with statistics of the training data (LISA §4; DeepAtt §4 "Constrained Decoding").
        self.transitions = self.add_weight(
            name="transitions",
            shape=(len(self.srl_labels), len(self.srl_labels)),
            initializer=keras.initializers.Constant(bio_transition_mask(self.srl_labels)),
            trainable=False,
            dtype="float32",
        )
        self.start_transitions = self.add_weight(
            name="start_transitions",
            shape=(len(self.srl_labels),),
            initializer=keras.initializers.Constant(bio_start_mask(self.srl_labels)),
            trainable=False,
            dtype="float32",
        )

    # ----------------------------------------------------------------- predicate identification
    def make_predicate_identifier(self, embedding_matrix=None) -> Optional[PredicateIdentifier]:
        """The word-only predicate tagger of a predicate-layout model
        (:mod:`lisa_tf.models.predicate_identifier`), or None when ``model.predicate_identifier_layers``
        is 0. It is sized like the model (width, filter, dropouts, embedding rows), in LISA's
        attention-then-FFN order, with the most heads up to ``model.num_heads`` that split the width
        evenly (Selective Connection's 100 units and 16 heads: 10 heads of 10)."""
        layers = self.config.predicate_identifier_layers
        if layers <= 0:
            return None
        if not self.joint_labels:
            raise ConfigError(
                "model.predicate_identifier_layers: the predicate identifier learns joint POS/predicate labels, "
                "and the training data has no POS tags; set model.predicate_identifier_layers=0"
            )
        is_predicate, _ = joint_label_maps(self.joint_labels, self.pos_labels)
        backbone = backbone_from_config(
            self.config, len(self.words), embedding_matrix, name="predicate_identifier_backbone",
            num_layers=layers, sublayer="ffn", order="attention_first", predicate_indicator=False, contextual="",
            num_heads=max(h for h in range(1, self.config.num_heads + 1) if self.config.hidden_size % h == 0),
        )
        return PredicateIdentifier(backbone, is_predicate.astype(float), name="predicate_identifier")

    def predicate_identifier_loss(self, features, outputs):
        """The identifier's joint POS/predicate cross-entropy (float32 scalar), or 0.0 without one."""
        if "joint_logits" not in outputs:
            return 0.0
        return masked_cross_entropy(
            features["joint_pos_predicate_ids"], outputs["joint_logits"], features["token_mask"], self.config.label_smoothing
        )

    def identify_predicates(self, features) -> dict:
        """Predicates found by the model's predicate identifier, from sentence features (no predicate
        given): ``predicate_flags`` bool [B, T] and ``predicate_probs`` float32 [B, T]."""
        identifier = getattr(self, "predicate_identifier", None)
        if identifier is None:
            raise ValueError(f"this {self.name} model has no predicate identifier; it labels given predicates only")
        logits = identifier(features["word_ids"], padding_mask=features["token_mask"], training=False)
        return {"predicate_flags": identifier.predicate_flags(logits, features["token_mask"]),
                "predicate_probs": identifier.predicate_probabilities(logits)}

    # ------------------------------------------------------------------------------- senses
    def with_sense_logits(self, outputs: dict, predicates) -> dict:
        """``outputs`` with ``sense_logits`` (``predicates``' shape but the last axis: one row per
        predicate vector) when the model has a sense head."""
        if self.sense_head is not None:
            outputs["sense_logits"] = self.sense_head(predicates)
        return outputs

    def sense_loss(self, features, outputs, mask):
        """The sense head's weighted loss (float32 scalar) over the predicates of ``mask``, or 0.0
        without a head or gold senses."""
        if "sense_logits" not in outputs:
            return 0.0
        ids = features.get("sense_ids", features.get("sense_id"))
        if ids is None:
            return 0.0
        return self.config.sense_loss_weight * sense_loss(ids, outputs["sense_logits"], mask, self.config.label_smoothing)

    def with_sense_scores(self, scores: dict, outputs: dict) -> dict:
        """``scores`` with ``sense_probs`` (softmax of ``sense_logits``) when the model has a sense head."""
        if "sense_logits" in outputs:
            scores["sense_probs"] = tf.nn.softmax(outputs["sense_logits"], axis=-1)
        return scores

    def decode_frames(self, probabilities, lengths, words, sense_probs=None, constraints: bool = True,
                      positions=None) -> dict:
        """Each predicate's tags and roleset, decoded together, in-graph.

        Args:
            probabilities: ``[N, T, L]`` tag probabilities, one row per predicate.
            lengths: ``[N]`` sentence lengths.
            words: ``[N]`` string, each predicate's word form.
            sense_probs: ``[N, S]`` the sense head's probabilities, or None (a model without senses).
            constraints: decode under the frame constraints
                (:func:`~lisa_tf.decoding.frame_viterbi.frame_viterbi_decode`: one of each core role,
                ``C-``/``R-`` after their role, only the chosen roleset's core roles); with ``False`` the
                plain constrained-BIO Viterbi. Models configured with ``model.decode = "argmax"`` decode by
                argmax either way.
            positions: ``[N]`` int, each predicate's token, which Viterbi decoding tags ``B-V`` so that
                none of its arguments contains it (:meth:`decode_tags`); None: not pinned.

        Returns:
            ``srl_tags`` ``[N, T]``; with a sense head ``senses`` ``[N]`` string (the roleset: the head's
            best among the word's candidates, a marked fallback, or ``""``) and ``sense_sources`` ``[N]``
            int32 (an index into :data:`lisa_tf.decoding.sense_choice.SOURCES`).
        """
        out = {}
        allowed = None
        if sense_probs is not None:
            if self.sense_choice is not None:
                choice = self.sense_choice(words, sense_probs)
                out["senses"] = self.sense_choice.roleset_names(choice["sense"])
                out["sense_sources"] = choice["source"]
                allowed = self.sense_choice.allowed_core(choice["sense"], self.core_role_tags.roles)
            else:  # no lexicon (a model saved before it): the head's best roleset overall
                best = tf.argmax(sense_probs, axis=-1, output_type=tf.int32)
                out["senses"] = tf.gather(tf.constant(self.sense_labels), best)
                out["sense_sources"] = tf.ones_like(best)
        out["srl_tags"] = self.decode_tags(probabilities, lengths, allowed if constraints else None, constraints,
                                           positions)
        return out
    def decode_predicate_rows(self, scores: dict, features, constraints: bool = True) -> dict:
        """:meth:`decode_frames` for the predicate layout: one example per predicate, at
        ``features["predicate_position"]``."""
        positions = tf.cast(features["predicate_position"], tf.int32)
        words = tf.gather(features["tokens"], positions, batch_dims=1)
        return self.decode_frames(scores["srl_probs"], tf.cast(features["length"], tf.int32), words,
                                  scores.get("sense_probs"), constraints, positions)

    @classmethod
    def model_layout(cls, config: ModelConfig) -> str:
        """The example layout this model kind reads with ``config``."""
        return cls.layout

    # ------------------------------------------------------------------------- serialisation
    def get_config(self):
        config = {
            "name": self.name,
            "trainable": self.trainable,
            "config": dataclasses.asdict(self.config),
            "words": list(self.words),
            "srl_labels": list(self.srl_labels),
            "joint_labels": list(self.joint_labels),
            "pos_labels": list(self.pos_labels),
            "dep_labels": list(self.dep_labels),
            "upos_labels": list(self.upos_labels),
            "sense_labels": list(self.sense_labels),
            "sense_lexicon": dict(self.sense_lexicon) if self.sense_lexicon is not None else None,
        }
        # The contextual encoder's own config (architecture, vocabulary): the model loads without its preset.
        encoders = encoders_in(self)
        if encoders:
            config["contextual_encoder"] = encoders[0].get_config()
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        with saved_encoder(config.pop("contextual_encoder", None)):
            return cls(**config)

    def get_build_config(self):
        return {"built": bool(self.built)}

    def build_from_config(self, config):
        if config.get("built"):
            self.build_from_batch()

    def get_compile_config(self):
        # The optimiser and its schedule belong to the training run (its config and checkpoints),
        # not to the saved model.
        return None

    def vocabularies(self) -> Vocabularies:
        """The model's vocabularies as :class:`data_pipeline.vocab.Vocabularies` (for the readers'
        side of prediction: label ids of gold data, tag names of outputs)."""
        return Vocabularies(
            words=Vocabulary("words", self.words, oov_id=OOV_ID),
            srl=Vocabulary("srl", self.srl_labels),
            pos=Vocabulary("pos", self.pos_labels),
            joint_pos_predicate=Vocabulary("joint_pos_predicate", self.joint_labels),
            dep_labels=Vocabulary("dep_labels", self.dep_labels),
            upos=Vocabulary("upos", self.upos_labels),
            senses=Vocabulary("senses", self.sense_labels),
        )

    # ------------------------------------------------------------------------------ building
    def set_transitions(self, matrix: np.ndarray, start: np.ndarray) -> None:
        """Use these transition and first-tag log-probabilities for Viterbi ([L, L] and [L])."""
        self.transitions.assign(np.asarray(matrix, np.float32))
        self.start_transitions.assign(np.asarray(start, np.float32))

    def example_inputs(self) -> dict:
        """A one-sentence, two-token batch of preprocessor inputs in the model's layout, with the
        labels the losses read (zeros)."""
        zeros = tf.zeros([1, 2], tf.int32)
        inputs = {
            "tokens": tf.constant([["a", "b"]]),
            "parse_heads": tf.constant([[0, 1]], tf.int32),
            "pos_ids": zeros,
            "joint_pos_predicate_ids": zeros,
            "dep_label_ids": zeros,
            "upos_ids": zeros,
        }
        if self.layout == "predicate":
            inputs.update(predicate_position=tf.constant([0]), srl_tag_ids=zeros)
            if self.sense_head is not None:
                inputs["sense_id"] = tf.constant([0])
        else:
            inputs.update(predicate_positions=tf.constant([[0]]), num_predicates=tf.constant([1]),
                          srl_tag_ids=tf.zeros([1, 1, 2], tf.int32))
            if self.sense_head is not None:
                inputs["sense_ids"] = tf.constant([[0]])
        return inputs

    def build_from_batch(self, batch: Optional[dict] = None) -> None:
        """Create every weight by running one batch of features (default: the preprocessed
        :meth:`example_inputs`) through the model."""
        batch = batch if batch is not None else self.preprocessor(self.example_inputs())
        self(batch, training=False)
        if getattr(self, "predicate_identifier", None) is not None:
            self.identify_predicates(batch)
        if getattr(self, "optimizer", None) is not None and not self.optimizer.built:
            self.optimizer.build(self.trainable_variables)

    # ------------------------------------------------------------------------------ training
    def train_step(self, data):
        logs = super().train_step(data)
        strategy = tf.distribute.get_strategy()
        # Private API, Keras 3.15.1: Keras itself asks the strategy the same question
        # (keras/src/backend/tensorflow/trainer.py, _collective_all_reduce_multi_worker) and
        # TensorFlow has no public equivalent.
        if isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy) and strategy.extended._in_multi_worker_mode():
            # Keras reduces multi-worker step outputs with reduce("MEAN", axis=0), which needs a
            # batch axis; give the scalar logs one so they average across workers.
            logs = {name: tf.reshape(value, [1]) for name, value in logs.items()}
        return logs

    def _maybe_symbolic_build(self, iterator=None, data_batch=None):
        # Overrides a private Keras 3.15.1 hook (keras/src/backend/tensorflow/trainer.py): under
        # tf.distribute, fit first averages the first distributed batch across replicas
        # (reduce("MEAN")), which fails for string/bool features and uneven splits, before it even
        # checks whether the model is built. The model and its optimiser are built explicitly
        # (build_from_batch) before fit, so there is nothing to build; Keras has no public switch.
        if self.built and all(layer.built for layer in self._flatten_layers()) and (
            self.optimizer is None or self.optimizer.built
        ):
            return
        super()._maybe_symbolic_build(iterator=iterator, data_batch=data_batch)

    @property
    def _default_save_signature(self):
        # Overrides a private Keras 3.15.1 hook (keras/src/backend/tensorflow/layer.py): when
        # TensorFlow saves the model's object graph (every export), Keras traces a default
        # "serving_default" of a subclassed model with every input typed float32. A model that reads
        # the string tokens (a contextual encoder) fails that trace, and the model's tables then
        # drop out of the SavedModel. The exports define their own signatures
        # (export/saved_model.py), so there is no default to trace; Keras has no public switch.
        return None

    # ------------------------------------------------------------------------------ decoding
    def decode_tags(self, probabilities, lengths, allowed_core=None, constraints: bool = False, positions=None):
        """Tag ids [..., T] from probabilities [..., T, L]: argmax, constrained-BIO Viterbi, or with
        ``constraints`` the frame-constrained Viterbi (:meth:`decode_frames`; ``allowed_core`` [N, K] the
        core roles of each row's roleset, rows flattened). ``positions`` [...]: each row's predicate token,
        which both Viterbi searches tag ``B-V``, so that no argument span contains its own predicate
        (:func:`~lisa_tf.decoding.viterbi.pin_predicates`); argmax decodes each token alone, as DeepAtt does."""
        probabilities = tf.cast(probabilities, tf.float32)
        if self.decode_mode == "argmax":
            return tf.argmax(probabilities, axis=-1, output_type=tf.int32)
        shape = tf.shape(probabilities)
        flat = tf.reshape(probabilities, tf.concat([[-1], shape[-2:]], 0))
        flat_lengths = tf.reshape(lengths, [-1])
        pinned = dict(predicates=tf.reshape(tf.cast(positions, tf.int32), [-1]), predicate_tag=self.predicate_tag) \
            if positions is not None and self.predicate_tag is not None else {}
        if constraints:
            paths = frame_viterbi_decode(tf.math.log(flat + 1e-12), flat_lengths, self.core_role_tags, self.transitions,
                                         self.start_transitions, allowed_core, **pinned)
        else:
            paths, _ = viterbi_decode(tf.math.log(flat + 1e-12), flat_lengths, self.transitions, self.start_transitions,
                                      **pinned)
        return tf.reshape(paths, shape[:-1])
