"""SavedModel export with serving signatures that need nothing but core TensorFlow (a model with a
contextual encoder, ``model.contextual``, also needs TF Text's word-piece ops: the export runs the
frozen encoder in-graph, and a process serving it imports ``tensorflow_text``, as
:func:`export.model_versions.load_version` does).

``export_run(run_dir, out_dir)`` loads a run's model in float32 (whatever policy it was trained
with) with its best weights (:func:`lisa_tf.models.runs.load_run`; ``export_model`` takes a loaded model) and
writes a SavedModel with ``keras.export.ExportArchive``: the model's variables, its preprocessor (the
same in-graph features as training: lower-casing, the word table, masks, predicate indicator, head
convention), the Viterbi decoder (for the parser, Eisner's tree decoder), and the label-name tables
read from ``assets/`` (``srl_labels.tsv``, ``pos_tags.tsv``, ``dep_labels.tsv``, and ``upos_tags.tsv`` when
the data had UPOS, ``senses.tsv`` with a sense head; one ``entry<TAB>id`` per line). Only the signatures below are exported; Keras adds none of its own.

A model with a sense head (:mod:`lisa_tf.models.sense_head`) also answers each predicate's roleset, in
every signature: ``senses`` string [B, P] (``kill.01``; ``""`` pad), ``sense_sources`` string [B, P]
(``"model"``, ``"frame_index"`` or ``"none"``: :func:`sense_outputs`; ``""`` pad) and ``sense_names`` string [B, P] (the roleset's name,
``""`` where unknown); [B] in the predicate models' ``serving_default`` and ``sentences``. The ``text``
signatures add per argument what its role means for the predicate's roleset: ``argument_descriptions``,
``argument_function_tags`` and ``argument_vn_roles`` string [B, P, S] (``""`` where the roleset lacks the
role, and on padding). Names and meanings come from string tables (:class:`FrameMeanings`) written at
export time from the shipped PropBank frame index (with a user's own index merged over it: ``frames=``)
with the strings of :mod:`lisa_tf.decoding.frame_meanings`, which every other output prints; the shipped
index's ``ATTRIBUTION`` and ``LICENSE`` go into ``assets/`` as ``frames_ATTRIBUTION`` and
``frames_LICENSE``, those beside a user's own index as ``frames_own_ATTRIBUTION`` and ``frames_own_LICENSE``.

Signatures (``B`` sentences, ``T`` tokens, ``P`` predicates):

* sentence models (LISA, SA):

  - ``serving_default(tokens: string [B, T])``, padded with ``""``;
  - ``with_parse(tokens, parse_heads: int32 [B, T])``: 1-based heads, 0 = root, −1 on padding;
    the parse replaces the syntax head's attention (LISA §3, parse injection). REST ignores signature
    defaults, hence a separate signature;
  - ``sentences(sentences: string [B])``: whitespace-tokenised sentences, split in-graph;
  - ``text(text: string [B])``: raw text, each a sentence or a paragraph, split into sentences and
    tokenised in-graph with the project's UD-EWT rules (:func:`data_pipeline.tokenizer.sentences_tf`,
    :func:`~data_pipeline.tokenizer.tokenize_tf`, core ops only; the splits ``predict`` makes), each
    sentence labelled on its own and the sentences of a text laid side by side again
    (:mod:`export.paragraph_layout`: tokens numbered through the text, ``sentence_starts``/``_ends``
    int32 [B, N] character spans, ``token_sentences`` [B, T] and ``predicate_sentences`` [B, P] the
    sentence of each token and frame, −1 pad), answered in spans: ``tokens``
    [B, T], ``token_starts``/``token_ends`` int32 [B, T] (character offsets, −1 pad),
    ``predicate_flags``/``predicate_positions`` as below, ``pos`` [B, T], and per predicate its arguments (``S`` the most
    of any predicate): ``argument_roles`` string [B, P, S], ``argument_token_starts``/``_ends``
    int32 (token span, end exclusive), ``argument_starts``/``_ends`` int32 (character span),
    ``argument_scores`` float32 (mean probability of the span's tags); −1 / ``""`` / 0 on padding;
    models that use syntax (LISA) add their own parse: ``heads`` int32 [B, T] (1-based, 0 = root,
    −1 pad) and ``dep_labels`` string [B, T]; models that tag POS add ``predicate_verbal`` int32
    [B, P] (1 a verb frame, 0 not, −1 pad: :mod:`data_pipeline.predicate_kinds`, what ``predict
    --predicates verbal`` keeps) for a client to keep verb frames only;

  the token signatures' outputs ``predicate_flags`` int32 [B, T], ``pos`` string [B, T], ``heads`` int32 [B, T] (1-based,
  0 = root), ``dep_labels`` string [B, T], ``predicate_positions`` int32 [B, P] (−1 pad), ``predicate_verbal``
  int32 [B, P],
  ``srl_tags`` string [B, P, T] (``""`` on padding), ``srl_scores`` float32 [B, P, T] (probability of
  the chosen tag), ``lengths`` int32 [B].

* predicate models (DeepAtt, Selective Connection): ``serving_default(tokens, predicate_index: int32
  [B])`` and ``sentences(sentences, predicate_index)``; outputs ``srl_tags`` string [B, T],
  ``srl_scores`` float32 [B, T], ``lengths`` int32 [B]. A model with a predicate identifier
  (:mod:`lisa_tf.models.predicate_identifier`) also finds predicates itself:
  ``find_predicates(tokens)`` answers like the sentence models' ``serving_default`` (without
  ``pos``/``heads``/``dep_labels``), and ``text(text)`` as below (without ``pos``).

* the dependency parser (:mod:`lisa_tf.models.parser`): ``serving_default(tokens: string [B, T])``
  padded with ``""``, ``sentences(sentences: string [B])`` split on whitespace in-graph, and
  ``text(text: string [B])`` tokenised in-graph like the sentence models' ``text``; outputs ``heads``
  int32 [B, T] (1-based CoNLL-U heads, 0 = root, −1 on padding), ``dep_labels`` string [B, T] (each
  token's best label for its head), ``pos`` string [B, T] (the jointly predicted tags; XPOS for
  CoNLL-U data), ``upos`` string [B, T] (the jointly predicted universal tags), ``lengths`` int32 [B];
  ``text`` splits paragraphs into sentences and adds ``tokens``, ``token_starts``/``token_ends``,
  ``sentence_starts``/``_ends`` and ``token_sentences`` as above. ``dep_labels``, ``pos`` or
  ``upos`` is left out when the model has no such labels (unlabelled parsing, no tagger). The trees
  are decoded in-graph with Eisner's projective algorithm (:func:`lisa_tf.decoding.eisner.eisner_heads`:
  exactly one root dependent, no cycle); ``python -m lisa_tf parse`` with a run uses Chu-Liu-Edmonds
  (:func:`lisa_tf.decoding.mst.decode_tree`), which also allows non-projective trees, so the two
  agree wherever the best tree is projective.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import tempfile
from typing import Mapping, Optional

import keras
import tensorflow as tf
from tensorflow.python.saved_model import save_context

from data_pipeline.errors import UserError
from data_pipeline.graph_masks import masked_rows
from data_pipeline.predicate_kinds import AUXILIARY_FORMS, AUXILIARY_RELATIONS
from data_pipeline.tokenizer import sentences_tf, tokenize_tf
from data_pipeline.version_names import parse_version

from lisa_tf.decoding.bio_spans import bio_spans
from lisa_tf.decoding.head_indices import to_conllu
from lisa_tf.decoding.sense_choice import SOURCES
from lisa_tf.labelling.batches import decode_batch
from lisa_tf.models import DependencyParser
from lisa_tf.models.runs import load_model_file, load_run, with_frames
from lisa_tf.packages.finding import KERAS_FILE, PACKAGE_ASSETS
from lisa_tf.util.atomic_files import partial_directory

from export.paragraph_layout import paragraph_layout
from export.warmup import write_warmup_requests


def _name_table(path: str) -> tf.lookup.StaticHashTable:
    """``id -> entry`` from an asset file with one ``entry<TAB>id`` per line (the label names of the
    model's output ids)."""
    initializer = tf.lookup.TextFileInitializer(path, tf.int64, 1, tf.string, 0, delimiter="\t")
    return tf.lookup.StaticHashTable(initializer, default_value="")


def _write_table_asset(directory: pathlib.Path, name: str, entries) -> str:
    path = directory / f"{name}.tsv"
    path.write_text("".join(f"{entry}\t{i}\n" for i, entry in enumerate(entries)))
    return str(path)


class LabelNames(tf.Module):
    """The id → name tables of the model's outputs, each read from an asset file (with a sense head,
    ``senses.tsv``: the rolesets of ``model.sense_labels``)."""

    def __init__(self, model, asset_dir: pathlib.Path):
        super().__init__(name="label_names")
        senses = model.sense_labels if getattr(model, "sense_head", None) is not None else None
        self.assets = {
            kind: tf.saved_model.Asset(_write_table_asset(asset_dir, file, labels))
            for kind, file, labels in (("srl", "srl_labels", model.srl_labels), ("pos", "pos_tags", model.pos_labels),
                                       ("dep", "dep_labels", model.dep_labels), ("upos", "upos_tags", model.upos_labels),
                                       ("sense", "senses", senses))
            # models before the UPOS vocabulary, and data without UPOS, have none; models without a sense head
            if kind not in ("upos", "sense") or labels
        }
        self.tables = {kind: _name_table(asset.asset_path) for kind, asset in self.assets.items()}

    def __call__(self, ids, kind, mask):
        return tf.where(mask, self.tables[kind].lookup(tf.cast(ids, tf.int64)), "")


class FrameMeanings(tf.Module):
    """What the rolesets and their roles mean, looked up in-graph: string → string tables read from
    asset files (one ``key<TAB>value`` per line) written at export time from a frame index with the
    strings :func:`lisa_tf.decoding.frame_meanings.tables` gives every other output: ``sense_names.tsv`` keyed by
    roleset id, ``description.tsv``, ``function_tag.tsv`` and ``vn_role.tsv`` keyed by
    ``roleset|label`` (``bark.01|ARG0``). Unknown keys give ``""``."""

    def __init__(self, index, asset_dir: pathlib.Path):
        from lisa_tf.decoding.frame_meanings import tables

        super().__init__(name="frame_meanings")
        self.assets = {}
        for name, rows in tables(index).items():
            path = asset_dir / f"{name}.tsv"
            path.write_text("".join(f"{key}\t{value}\n" for key, value in rows), encoding="utf-8")
            self.assets[name] = tf.saved_model.Asset(str(path))
        self.tables = {
            name: tf.lookup.StaticHashTable(
                tf.lookup.TextFileInitializer(asset.asset_path, tf.string, 0, tf.string, 1, delimiter="\t"),
                default_value="")
            for name, asset in self.assets.items()}

    def sense_names(self, senses):
        """The roleset names of ``senses`` (any shape; ``""`` where unknown)."""
        return self.tables["sense_names"].lookup(senses)

    def arguments(self, senses, roles) -> dict:
        """Per argument of ``roles`` [B, P, S] (``""`` pad) of the predicates whose rolesets are
        ``senses`` [B, P]: ``argument_descriptions``, ``argument_function_tags`` and
        ``argument_vn_roles`` ([B, P, S], ``""`` where unknown). A ``C-``/``R-`` argument takes its role's."""
        from lisa_tf.decoding.frame_meanings import ARGUMENT_KEYS, ROLE_KEY, ROLE_PREFIX

        rolesets = tf.broadcast_to(senses[..., None], tf.shape(roles))
        keys = tf.strings.join([rolesets, tf.strings.regex_replace(roles, ROLE_PREFIX, "")], separator=ROLE_KEY)
        real = tf.logical_and(rolesets != "", roles != "")
        return {output: tf.where(real, self.tables[key].lookup(keys), "") for key, output in ARGUMENT_KEYS.items()}


def sense_outputs(decoded: dict, positions) -> dict:
    """``senses`` (roleset id, ``""`` pad and where no roleset is known) and ``sense_sources``
    (:data:`lisa_tf.decoding.sense_choice.SOURCES`: ``"model"``, ``"frame_index"``, ``"none"``; ``""`` pad)
    of each predicate, from the decoded ``senses``/``sense_sources``: [B, T] (token t as predicate)
    gathered at ``positions`` [B, P] (−1 pad), or, with ``positions`` None, [B] (one predicate per
    row). ``{}`` for a model without a sense head."""
    if "senses" not in decoded:
        return {}
    senses, sources = decoded["senses"], tf.gather(tf.constant(SOURCES), decoded["sense_sources"])
    if positions is None:
        real = tf.ones_like(senses, tf.bool)
    else:
        safe = tf.maximum(positions, 0)
        senses, sources = tf.gather(senses, safe, batch_dims=1), tf.gather(sources, safe, batch_dims=1)
        real = positions >= 0
    return {"senses": tf.where(real, senses, ""), "sense_sources": tf.where(real, sources, "")}


def serving_functions(model, names: LabelNames, meanings: Optional[FrameMeanings] = None,
                      constraints: bool = True) -> dict:
    """The signatures of the module docstring as ``name -> (function, input signature)``; ``meanings``
    (a model with a sense head) adds the senses' names and the arguments' meanings; ``constraints``:
    decode under the frame constraints (:meth:`~lisa_tf.models.base.SrlModel.decode_frames`)."""
    layout = model.layout
    uses_syntax = getattr(model, "uses_syntax", False)

    def with_senses(out, decoded, positions):
        """``out`` with :func:`sense_outputs` and, from ``meanings``, ``sense_names``."""
        senses = sense_outputs(decoded, positions)
        if senses and meanings is not None:
            senses["sense_names"] = meanings.sense_names(senses["senses"])
        return out | senses

    def run(tokens, predicate_index=None, parse_heads=None, inject=None):
        """The model's outputs for ``tokens``; ``parse_heads`` injected, or with ``inject`` (a scalar bool
        tensor) injected where it is True, the model's own parse used where it is False (one graph for both)."""
        inputs = {"tokens": tokens}
        if predicate_index is not None:
            inputs["predicate_position"] = predicate_index
        if parse_heads is not None:
            inputs["parse_heads"] = parse_heads
        batch = model.preprocessor(inputs)
        checks = []
        # Out-of-range inputs are the request's error (TensorFlow Serving answers 400 with the message),
        # never a silently shifted or clipped answer.
        if predicate_index is not None:
            inside = tf.logical_and(predicate_index >= 0, predicate_index < batch["length"])
            checks.append(tf.debugging.Assert(
                tf.reduce_all(inside),
                ["predicate_index: expected a token index in 0..length-1 of its sentence; found", predicate_index,
                 "for lengths", batch["length"]], summarize=8))
        if parse_heads is not None:
            real = batch["token_mask"]
            inside = tf.logical_and(parse_heads >= 0, parse_heads <= batch["length"][:, None])
            valid = tf.reduce_all(tf.logical_or(inside, tf.logical_not(real)))
            checks.append(tf.debugging.Assert(
                valid if inject is None else tf.logical_or(valid, tf.logical_not(inject)),
                ["parse_heads: expected CoNLL-U heads in 0..length (0 = root) on every token, -1 only on padding; "
                 "lengths", batch["length"]], summarize=8))
        with tf.control_dependencies(checks):
            batch = {key: tf.identity(value) for key, value in batch.items()}
        options = {"constraints": constraints}
        if uses_syntax:
            options["inject_parse"] = inject if inject is not None else parse_heads is not None
        if getattr(model, "predicts_predicates", False):
            options["gold_predicates"] = False
        decoded = decode_batch([model], batch, **options)
        mask = batch["token_mask"]
        if layout == "predicate":
            return with_senses({"lengths": batch["length"], "srl_tags": names(decoded["srl_tags"], "srl", mask),
                                "srl_scores": tf.where(mask, decoded["srl_tag_probs"], 0.0)}, decoded, None)
        flags = tf.logical_and(tf.cast(decoded["predicate_flags"], tf.bool), mask)
        positions = left_aligned(flags)
        safe = tf.maximum(positions, 0)
        tags = tf.gather(decoded["srl_tags"], safe, batch_dims=1)  # [B, P, T]
        probs = tf.gather(decoded["srl_tag_probs"], safe, batch_dims=1)  # [B, P, T]
        out = with_senses(per_predicate_outputs(batch, flags, positions, tags, probs) | syntax_outputs(decoded, mask),
                          decoded, positions)
        if "pos" in out:
            out["predicate_verbal"] = verbal(tokens, positions, out)
        return out

    def verbal(tokens, positions, out):
        """[B, P] int32: 1 where the predicate is a verb frame, 0 where not, −1 on padding (the rule of
        :mod:`data_pipeline.predicate_kinds`, in-graph: a ``VB*`` tag not attached as an auxiliary)."""
        safe = tf.maximum(positions, 0)
        verb = tf.strings.regex_full_match(tf.gather(out["pos"], safe, batch_dims=1), "VB.*")
        if "dep_labels" in out:
            relations = tf.gather(out["dep_labels"], safe, batch_dims=1)
            auxiliary = tf.reduce_any(relations[..., None] == tf.constant(sorted(AUXILIARY_RELATIONS)), axis=-1)
        else:  # no labels (SA): an auxiliary word form without arguments
            forms = tf.strings.lower(tf.gather(tokens, safe, batch_dims=1))
            arguments = tf.reduce_any(tf.logical_not(tf.strings.regex_full_match(out["srl_tags"], "O|[BI]-(C-)?V|")),
                                      axis=-1)
            auxiliary = tf.logical_and(tf.reduce_any(forms[..., None] == tf.constant(sorted(AUXILIARY_FORMS)), axis=-1),
                                       tf.logical_not(arguments))
        return tf.where(positions >= 0, tf.cast(tf.logical_and(verb, tf.logical_not(auxiliary)), tf.int32), -1)

    def syntax_outputs(decoded, mask):
        """``pos``, ``upos``, ``heads`` (CoNLL-U) and ``dep_labels`` [B, T] of those the model decoded."""
        out = {}
        for kind in ("pos", "upos"):
            if kind in decoded:
                out[kind] = names(decoded[kind], kind, mask)
        if "heads" in decoded:
            out["heads"] = to_conllu(decoded["heads"], mask)
        if "dep_labels" in decoded:
            out["dep_labels"] = names(decoded["dep_labels"], "dep", mask)
        return out

    def parse(tokens):
        """The dependency parser: each sentence's best projective tree (Eisner, in-graph), each token's
        best label for its head, and its POS (and UPOS)."""
        batch = model.preprocessor({"tokens": tokens})
        decoded = model.decode_scores(model.predict_scores(batch), batch, tree=True)
        return {"lengths": batch["length"]} | syntax_outputs(decoded, batch["token_mask"])

    def left_aligned(flags):
        """The token positions of each sentence's predicates, left-aligned into [B, P] (−1 padding)."""
        ragged = masked_rows(tf.broadcast_to(tf.range(tf.shape(flags)[1])[None], tf.shape(flags)), flags)
        return ragged.to_tensor(default_value=-1)

    def per_predicate_outputs(batch, flags, positions, tags, probs):
        """The token signatures' outputs from predicate flags [B, T], positions [B, P] and each
        predicate's tag ids and probabilities [B, P, T]."""
        row_mask = tf.logical_and((positions >= 0)[:, :, None], batch["token_mask"][:, None, :])
        return {
            "lengths": batch["length"],
            "predicate_flags": tf.cast(flags, tf.int32),
            "predicate_positions": positions,
            "srl_tags": names(tags, "srl", row_mask),
            "srl_scores": tf.where(row_mask, probs, 0.0),
        }

    def find_and_label(tokens):
        """Predicate models: the predicate identifier finds the predicates, then each one is labelled
        as a (sentence, predicate) example; answered in the sentence models' layout."""
        batch = model.preprocessor({"tokens": tokens})
        flags = model.identify_predicates(batch)["predicate_flags"]
        where = tf.where(flags)  # [N, 2]: (sentence, predicate token), row-major like left_aligned
        rows = tf.cast(where[:, 0], tf.int32)
        examples = model.preprocessor({"tokens": tf.gather(tokens, rows),
                                       "predicate_position": tf.cast(where[:, 1], tf.int32)})
        decoded = decode_batch([model], examples, constraints=constraints)
        count = tf.shape(tokens)[0]

        def by_sentence(values):  # [N, T] → [B, P, T]
            return tf.RaggedTensor.from_value_rowids(values, rows, nrows=count, validate=False).to_tensor()

        positions = left_aligned(flags)
        out = per_predicate_outputs(batch, flags, positions, by_sentence(decoded["srl_tags"]),
                                    by_sentence(decoded["srl_tag_probs"]))
        if "senses" in decoded:  # one per example: laid out by predicate token [B, T], as the sentence models'
            index = tf.cast(where, tf.int32)
            decoded = {"senses": tf.tensor_scatter_nd_update(tf.fill(tf.shape(flags), ""), index, decoded["senses"]),
                       "sense_sources": tf.scatter_nd(index, decoded["sense_sources"], tf.shape(flags))}
        return with_senses(out, decoded, positions)

    def split(sentences):
        words = tf.strings.split(tf.strings.strip(sentences))  # whitespace tokenisation, core ops
        return words.to_tensor(default_value="")

    def tokenized(sentences):
        """Raw sentences → ``tokens`` [B, T] and their character offsets ``token_starts``/``token_ends``."""
        words, starts, ends = tokenize_tf(sentences)
        return {"tokens": words.to_tensor(default_value=""),
                "token_starts": tf.cast(starts.to_tensor(default_value=-1), tf.int32),
                "token_ends": tf.cast(ends.to_tensor(default_value=-1), tf.int32)}

    def paragraphs(texts, answer_sentences):
        """Raw texts → their sentences (split in-graph), each tokenised with character offsets into its
        text and answered by ``answer_sentences``, laid out again one row per text (:mod:`export.paragraph_layout`)."""
        sentences, rows, starts, ends = sentences_tf(texts)
        spans, shift = tokenized(sentences), tf.cast(starts, tf.int32)[:, None]
        for key in ("token_starts", "token_ends"):
            spans[key] = tf.where(spans[key] >= 0, spans[key] + shift, -1)
        return paragraph_layout(answer_sentences(spans), rows, starts, ends, tf.shape(texts)[0])

    def text(answer, label):
        """Tokenised sentences with character offsets → every predicate's argument spans, from the
        predicates ``label`` (the token signature's function) finds and labels."""
        tokens, char_starts, char_ends = answer["tokens"], answer["token_starts"], answer["token_ends"]
        out = label(tokens)
        batch, predicates, time = tf.unstack(tf.shape(out["srl_tags"]))
        spans = bio_spans(tf.reshape(out["srl_tags"], [-1, time]), tf.reshape(out["srl_scores"], [-1, time]))

        def per_predicate(ragged, default):  # [B·P, None] → [B, P, S]
            dense = ragged.to_tensor(default_value=default)
            return tf.reshape(dense, tf.stack([batch, predicates, tf.shape(dense)[1]]))

        first = per_predicate(spans["start"], -1)
        last = per_predicate(spans["end"], 0) - 1
        valid = first >= 0
        answer.update({
            "lengths": out["lengths"],
            "predicate_flags": out["predicate_flags"],
            "predicate_positions": out["predicate_positions"],
            "argument_roles": per_predicate(spans["label"], ""),
            "argument_token_starts": first,
            "argument_token_ends": tf.where(valid, last + 1, -1),
            "argument_starts": tf.where(valid, tf.gather(char_starts, tf.maximum(first, 0), batch_dims=1), -1),
            "argument_ends": tf.where(valid, tf.gather(char_ends, tf.maximum(last, 0), batch_dims=1), -1),
            "argument_scores": per_predicate(spans["score"], 0.0),
        })
        if "senses" in out:
            answer.update({key: out[key] for key in ("senses", "sense_sources", "sense_names") if key in out})
            if meanings is not None:
                answer.update(meanings.arguments(out["senses"], answer["argument_roles"]))
        if "pos" in out:
            answer["pos"] = out["pos"]
            answer["predicate_verbal"] = out["predicate_verbal"]
        if uses_syntax:  # the model's own parse (the syntax head), e.g. to draw it beside the spans
            answer.update({key: out[key] for key in ("heads", "dep_labels") if key in out})
        return answer

    tokens_spec = tf.TensorSpec([None, None], tf.string, name="tokens")
    sentences_spec = tf.TensorSpec([None], tf.string, name="sentences")
    text_spec = tf.TensorSpec([None], tf.string, name="text")
    index_spec = tf.TensorSpec([None], tf.int32, name="predicate_index")
    heads_spec = tf.TensorSpec([None, None], tf.int32, name="parse_heads")
    if isinstance(model, DependencyParser):
        parse_tokens = shared_function(parse, tokens_spec)
        return {
            "serving_default": (parse_tokens, [tokens_spec]),
            "sentences": (lambda sentences: parse_tokens(split(sentences)), [sentences_spec]),
            "text": (lambda text: paragraphs(text, lambda spans: spans | parse_tokens(spans["tokens"])), [text_spec]),
        }
    if layout == "predicate":
        label = shared_function(lambda tokens, predicate_index: run(tokens, predicate_index), tokens_spec, index_spec)
        functions = {
            "serving_default": (label, [tokens_spec, index_spec]),
            "sentences": (lambda sentences, predicate_index: label(split(sentences), predicate_index),
                          [sentences_spec, index_spec]),
        }
        if model.predicts_predicates:
            find = shared_function(find_and_label, tokens_spec)
            functions["find_predicates"] = (find, [tokens_spec])
            functions["text"] = (lambda text_: paragraphs(text_, lambda spans: text(spans, find)), [text_spec])
        return functions
    if uses_syntax:
        # One graph of the network for both: the given parse is injected or not as the flag says, so an
        # export holds (and traces, and a server restores) the network once, not once per signature.
        either = shared_function(lambda tokens, parse_heads, inject: run(tokens, parse_heads=parse_heads, inject=inject),
                                 tokens_spec, heads_spec, tf.TensorSpec([], tf.bool, name="inject"))

        def label(tokens):
            return either(tokens, tf.zeros(tf.shape(tokens), tf.int32), tf.constant(False))
    else:
        label = shared_function(lambda tokens: run(tokens), tokens_spec)
    functions = {
        "serving_default": (label, [tokens_spec]),
        "sentences": (lambda sentences: label(split(sentences)), [sentences_spec]),
        "text": (lambda text_: paragraphs(text_, lambda spans: text(spans, label)), [text_spec]),
    }
    if uses_syntax:
        functions["with_parse"] = (lambda tokens, parse_heads: either(tokens, parse_heads, tf.constant(True)),
                                   [tokens_spec, heads_spec])
    return functions


def shared_function(function, *input_signature: tf.TensorSpec):
    """``function`` as a ``tf.function`` of ``input_signature`` that several signatures call: its graph is
    traced once (:func:`_trace_endpoints_once`) and stored once, instead of once inside every signature that
    runs the model. The signatures' graphs call it."""
    return tf.function(function, input_signature=list(input_signature), autograph=False)


class ExportError(UserError):
    """An export directory that cannot be written: names it and what is expected."""


def check_export_dir(out_dir: str | os.PathLike) -> pathlib.Path:
    """``out_dir`` as a path, once it is known to be new or empty: an export never replaces another
    (TensorFlow Serving serves numbered version directories; a new model is a new version).

    Raises:
        ExportError: ``out_dir`` is a file, or a directory that holds anything.
    """
    out_dir = pathlib.Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise ExportError(f"{out_dir}: exists and is not a directory; expected a new version directory, e.g. exports/srl/1")
    if out_dir.exists() and any(out_dir.iterdir()):
        numbers = [n for n in (parse_version(p.name) for p in out_dir.parent.iterdir()) if n is not None]
        hint = f", e.g. {out_dir.parent / str(max(numbers) + 1)}" if parse_version(out_dir.name) is not None else ""
        raise ExportError(f"{out_dir}: directory exists and is not empty; export into a new version directory{hint}")
    return out_dir


def _trace_endpoints_once(archive: keras.export.ExportArchive) -> None:
    """Make ``archive.write_out`` trace each endpoint once instead of twice.

    ``write_out`` first lists the variables each endpoint uses, which traces the endpoints, then calls
    ``tf.saved_model.save``, which traces each again: a ``tf.function`` keeps a trace per tracing context,
    and inside the save its context holds the save options' variable policy. Listing the variables under
    the same save options makes the save find the traces it needs: half the tracing, which is most of an
    export's time. (``keras.export.ExportArchive`` is a factory of its backend's class: the archive's
    own step is wrapped, not subclassed.)
    """
    list_variables = archive._filter_and_track_resources

    def under_the_save_options():
        with save_context.save_context(tf.saved_model.SaveOptions()):
            list_variables()

    archive._filter_and_track_resources = under_the_save_options


def _store_each_weight_once(archive: keras.export.ExportArchive) -> None:
    """Make the archive's tracked variable lists hold the ``tf.Variable`` s the Keras variables wrap.

    ``ExportArchive.track`` lists the Keras variable wrappers, while the endpoints capture the
    ``tf.Variable`` inside each; TensorFlow's checkpoint de-duplicates by object, so Keras 3.15 writes
    every weight twice (keras-team/keras#23553): twice the export's size on disk and twice its variable
    memory in every server that loads it. With the same objects in both places each weight is written
    once; ``loaded.variables`` still lists them all.
    """
    # The lists are append-only trackables: replaced whole on the archive's trackable root.
    root = archive._tf_trackable
    for name in ("variables", "trainable_variables", "non_trainable_variables"):
        setattr(root, name, [v.value if isinstance(v, keras.Variable) and isinstance(v.value, tf.Variable) else v
                             for v in getattr(root, name)])


#: The signatures a labelling export leaves out: the library splits and tokenises text itself and sends tokens.
TEXT_SIGNATURES = ("text", "sentences")


def export_model(model, out_dir: str | os.PathLike, assets: Optional[Mapping[str, pathlib.Path]] = None,
                 frames: Optional[str | os.PathLike] = None, constraints: bool = True,
                 labelling: bool = False) -> pathlib.Path:
    """Write ``model`` (an :class:`~lisa_tf.models.base.SrlModel`, the dependency parser included;
    float32) as a SavedModel to ``out_dir`` (new or empty: :func:`check_export_dir`).

    The export carries TensorFlow Serving's warm-up records (:mod:`export.warmup`), one request per
    signature, replayed by a server before it serves the version. The version directory appears whole or not at all: it is written under a hidden sibling name
    (which TensorFlow Serving's poller and ours ignore: only numeric names are versions), with every
    asset, then renamed into place (:mod:`lisa_tf.util.atomic_files`). A server never loads an export whose
    ``assets/config.json`` (the request limits) is still to come. A model with a contextual encoder also
    gets ``assets/word_pieces.json``, its word-piece settings, by which the server counts a request's
    pieces before the model runs (:mod:`data_pipeline.word_pieces`); a server's export (not ``labelling``)
    also carries the encoder's own function of words to pieces, the SavedModel's function
    :data:`~data_pipeline.word_pieces.PIECE_FUNCTION` (not a signature: clients see only signatures),
    restored with it, so the server counts with the model's ops and builds no tokenizer of its own
    (keras-hub's import and a trace: loading and warming ``srl``'s export took 1.5 s less, paired runs).

    Args:
        model: the model to export.
        out_dir: the version directory (``exports/srl/1``).
        assets: extra files copied into ``assets/`` under the given names.
        frames: a user's own frame index, merged over the shipped one (default: the shipped one alone):
            the meaning tables of a model with a sense head are built from the merged index
            (:class:`FrameMeanings`), and the model's word-form lexicon takes the user's lemmas
            (:func:`lisa_tf.models.runs.with_frames`), so the signatures choose their rolesets too.
        constraints: the signatures decode under the frame constraints (default), or with the plain BIO
            Viterbi (``export --no-constraints``).
        labelling: the export the library labels through (the export cache's for ``predict``, ``load()``
            and the spaCy component), not one to serve: the token signatures only, without
            :data:`TEXT_SIGNATURES`, and without the checkpoint ops TensorFlow Serving restores variables
            with (``SaveOptions(experimental_skip_saver=True)``; ``tf.saved_model.load`` restores them
            from the object graph). Their functions are 3,820 of the 9,699 ops of ``srl``'s export, which
            ``tf.saved_model.load`` rebuilds one by one whichever signature is called: its restore takes
            about a quarter less time. The token signatures are the same functions, so the same answers.
    """
    from data_pipeline.word_pieces import PIECE_FUNCTION, SETTINGS_FILE as WORD_PIECES_FILE, WordPieceCounter
    from lisa_tf.decoding.frame_meanings import attribution_files, check_frames, frame_index
    from lisa_tf.models.contextual import encoders_in

    out_dir = check_export_dir(out_dir)
    frames = check_frames(frames)
    model = with_frames(model, frames, "float32")
    with partial_directory(out_dir) as build, tempfile.TemporaryDirectory() as scratch:
        names = LabelNames(model, pathlib.Path(scratch))
        archive = keras.export.ExportArchive()
        _trace_endpoints_once(archive)
        archive.track(model)
        archive.track(names)
        meanings = None
        if "sense" in names.tables and not isinstance(model, DependencyParser):
            meanings = FrameMeanings(frame_index(frames), pathlib.Path(scratch))
            archive.track(meanings)
            # the meaning tables are derived from the frame files: their attribution and licence go along, the
            # shipped index's and those beside a user's own index merged over it
            shipped = attribution_files()
            own = {f"frames_own_{name}": path for name, path in attribution_files(frames).items()
                   if frames is not None and path != shipped.get(name)}
            assets = {**{f"frames_{name}": path for name, path in shipped.items()}, **own, **(assets or {})}
        functions = serving_functions(model, names, meanings, constraints)
        if labelling:
            functions = {name: f for name, f in functions.items() if name not in TEXT_SIGNATURES}
        for name, (function, signature) in functions.items():
            archive.add_endpoint(name, function, input_signature=signature)
        _store_each_weight_once(archive)
        encoders = encoders_in(model)[:1]
        if encoders and not labelling:  # the server counts a request's pieces with it
            setattr(archive._tf_trackable, PIECE_FUNCTION, encoders[0].piece_function)
        options = tf.saved_model.SaveOptions(experimental_skip_saver=labelling)
        archive.write_out(str(build), options, verbose=False)
        write_warmup_requests(build, {name: [spec.name for spec in signature] for name, (_, signature) in functions.items()})
        for name, source in (assets or {}).items():
            shutil.copy(source, build / "assets" / name)
        for encoder in encoders:  # the server counts a request's word pieces with these
            WordPieceCounter.write(encoder.word_piece_settings(), build / "assets" / WORD_PIECES_FILE)
    return out_dir


def export_run(run_dir: str | os.PathLike, out_dir: str | os.PathLike, weights: str = "best",
               model=None, frames: Optional[str | os.PathLike] = None, constraints: bool = True,
               labelling: bool = False) -> pathlib.Path:
    """Export the run's model to ``out_dir`` (e.g. ``exports/srl/1``, TF-Serving layout); float32.
    ``weights``: ``best``, ``final``, ``model`` (the weights in ``model.keras``) or a path; ``model``:
    the run's model already loaded that way (float32), instead of loading it again. The run's
    ``config.json`` and ``vocab/vocab_info.json`` (the training data's sizes: the server's request
    limits) go into the export's assets. ``frames``, ``labelling``: as for :func:`export_model`."""
    check_export_dir(out_dir)  # before the model is loaded
    if model is None:
        model = load_run(run_dir, weights, dtype_policy="float32")
    assets = {"config.json": pathlib.Path(run_dir) / "config.json"}
    info = pathlib.Path(run_dir) / "vocab" / "vocab_info.json"
    if info.exists():
        assets["vocab_info.json"] = info
    return export_model(model, out_dir, assets, frames, constraints, labelling)


def export_package(package: str | os.PathLike, out_dir: str | os.PathLike,
                   frames: Optional[str | os.PathLike] = None, constraints: bool = True,
                   labelling: bool = False) -> pathlib.Path:
    """Export a packaged model (:mod:`lisa_tf.packages.finding`: ``model.keras`` with its run's
    ``assets/config.json`` and ``assets/vocab_info.json``, which become the export's assets) to
    ``out_dir``; float32 whatever precision the package stores its weights in. ``frames``, ``labelling``: as
    for :func:`export_model`."""
    package = pathlib.Path(package)
    check_export_dir(out_dir)  # before the model is loaded
    model = load_model_file(package / KERAS_FILE, dtype_policy="float32")
    assets = {name: package / PACKAGE_ASSETS / name for name in ("config.json", "vocab_info.json")
              if (package / PACKAGE_ASSETS / name).exists()}
    return export_model(model, out_dir, assets, frames, constraints, labelling)
