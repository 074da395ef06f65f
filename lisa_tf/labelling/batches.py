"""From a trained model to labelled :class:`~data_pipeline.sentence.Sentence` objects.

Every model exposes ``layout`` (``"predicate"``: one example per gold predicate, DeepAtt and
gold-predicate modes; ``"sentence"``: one example per sentence, LISA/SA), ``predict_scores(features,
**options)`` returning probability tensors, and ``decode_scores(scores, features)``, in-graph, returning tag ids
(argmax or Viterbi, chosen by the model's config). An ensemble averages the scores of its models (the
softmax outputs, DeepAtt §4 "Model Setup") and decodes them with the first model. The tag ids are:

* predicate layout: ``srl_tags`` [B, T] — the BIO tags of the example's predicate;
* sentence layout: ``predicate_flags`` [B, T], ``srl_tags`` [B, T, T] (row i: the tags if token i is a
  predicate) and, when the model predicts them, ``pos`` [B, T], ``heads`` [B, T] (0-based, root =
  self-loop) and ``dep_labels`` [B, T];
* with a sense head, ``senses``: each predicate's roleset (string; [B] in the predicate layout, [B, T]
  in the sentence layout: row i, token i as predicate) and ``sense_sources`` (int32, an index into
  :data:`lisa_tf.decoding.sense_choice.SOURCES`), written to :attr:`Predicate.sense` and
  :attr:`Predicate.sense_source` (``""`` → ``None``).

The option ``constraints`` (default True) decodes under the frame constraints
(:meth:`~lisa_tf.models.base.SrlModel.decode_frames`); the other options go to ``predict_scores``.

This module turns those ids back into spans with :func:`data_pipeline.spans.bio_to_spans` (DeepAtt's
rule for invalid BIO) and into Sentences the scorer and the writers read. Predicted ``V`` spans are
replaced by the predicate's own one-token ``V`` span, so the output is well-formed props.
"""

from __future__ import annotations

import dataclasses
from typing import Optional, Sequence

import numpy as np
import tensorflow as tf

from data_pipeline.dataset import inference_batches
from data_pipeline.errors import UserError
from data_pipeline.sentence import Predicate, Sentence, Span
from data_pipeline.spans import bio_to_spans
from data_pipeline.vocab import Vocabularies

from lisa_tf.decoding.head_indices import to_conllu
from lisa_tf.decoding.sense_choice import SOURCES
from lisa_tf.labelling.compiled import compiled


def tags_to_arguments(tag_ids: Sequence[int], vocabs: Vocabularies, position: int) -> tuple[Span, ...]:
    """Spans of one predicate from its tag ids (length = sentence length)."""
    tags = [vocabs.srl.entry(int(i)) for i in tag_ids]
    spans = [s for s in bio_to_spans(tags) if s.label not in ("V", "C-V")]
    spans.append(Span(position, position, "V"))
    return tuple(sorted(spans))


class EnsembleError(UserError):
    """Models that cannot form an ensemble: names the two that differ and what an ensemble needs."""


#: What the models of an ensemble have in common (their softmax outputs are averaged position by position).
ENSEMBLE_NEEDS = ("an ensemble averages the softmax outputs of runs of one model kind (all deepatt, all lisa, all sa "
                  "or all selective) with the same model.gold_predicates, trained on the same data (same vocabularies)")


def check_ensemble(members: Sequence[tuple[str, str, str]]) -> None:
    """Check that models can be ensembled, from ``(name, model kind, layout)`` per model (a run's
    config gives them before any model is loaded).

    Raises:
        EnsembleError: naming the first model and one that differs, their kinds and what is allowed.
    """
    first, kind, layout = members[0]
    for name, other_kind, other_layout in members[1:]:
        if other_kind != kind:
            raise EnsembleError(f"{name} is a {other_kind} model and {first} a {kind} model; {ENSEMBLE_NEEDS}")
        if other_layout != layout:
            raise EnsembleError(f"{name} labels {'given' if other_layout == 'predicate' else 'its own'} predicates and "
                                f"{first} {'given' if layout == 'predicate' else 'its own'}; {ENSEMBLE_NEEDS}")


def check_ensemble_models(models: Sequence, names: Optional[Sequence[str]] = None) -> None:
    """:func:`check_ensemble` for loaded models (``names`` default: ``model 1``, ``model 2``, …), and
    that they share their word and SRL label vocabularies."""
    names = list(names) if names is not None else [f"model {i + 1}" for i in range(len(models))]
    check_ensemble([(name, m.config.kind, m.layout) for name, m in zip(names, models)])
    for name, other in zip(names[1:], models[1:]):
        if other.srl_labels != models[0].srl_labels or other.words != models[0].words:
            raise EnsembleError(f"{name} and {names[0]} have different vocabularies (words or SRL labels); "
                                f"{ENSEMBLE_NEEDS}")


def decode_batch(models: Sequence, batch: dict, **options) -> dict:
    """Tag ids of one batch from one model, or from an ensemble's averaged scores, and
    ``srl_tag_probs``: the probability of each chosen SRL tag (the shape of ``srl_tags``). ``options``:
    ``constraints`` (module docstring), the rest for ``predict_scores``."""
    constraints = options.pop("constraints", True)
    if len(models) == 1:
        scores = models[0].predict_scores(batch, **options)
    else:
        all_scores = [m.predict_scores(batch, **options) for m in models]
        scores = {k: sum(s[k] for s in all_scores) / len(all_scores) for k in all_scores[0]}
    decoded = models[0].decode_scores(scores, batch, constraints=constraints)
    tags = decoded["srl_tags"]
    decoded["srl_tag_probs"] = tf.gather(tf.cast(scores["srl_probs"], tf.float32), tags, batch_dims=len(tags.shape))
    return decoded


def _label_batch(models: Sequence, batch: dict, **options) -> tuple:
    """``(features, tag ids)``: a batch as read, featurised by the first model's preprocessor, and
    decoded (:func:`decode_batch`); the compiled step of :func:`label_sentences` (one graph for both)."""
    features = models[0].preprocessor(batch)
    return features, decode_batch(models, features, **options)


def predict_sentences(
    model,
    sentences: Sequence[Sentence],
    vocabs: Optional[Vocabularies] = None,
    token_budget: int = 4096,
    **options,
) -> list[Sentence]:
    """Label ``sentences`` with ``model`` (or a list of models: an ensemble); returns new Sentences.

    In the predicate layout the gold predicates are kept and their arguments replaced; in the
    sentence layout the predicates, and POS/heads/labels when predicted, are the model's own.
    ``options`` go to the models' ``predict_scores`` (e.g. ``inject_parse=True``,
    ``gold_predicates=True`` for LISA). ``vocabs`` defaults to the model's own vocabularies.
    """
    return label_sentences(model, sentences, vocabs, token_budget, **options)[0]


def label_sentences(
    model,
    sentences: Sequence[Sentence],
    vocabs: Optional[Vocabularies] = None,
    token_budget: int = 4096,
    **options,
) -> tuple[list[Sentence], list[dict[int, np.ndarray]]]:
    """:func:`predict_sentences`, and for each sentence the probability of every chosen tag of each
    predicate (``{predicate position: [n] float32}``), from which argument scores are read."""
    models = list(model) if isinstance(model, (list, tuple)) else [model]
    if len(models) > 1:
        check_ensemble_models(models)
    model = models[0]
    vocabs = vocabs if vocabs is not None else model.vocabularies()
    if model.layout == "predicate" and model.predicts_predicates and not options.get("gold_predicates", True):
        sentences = with_identified_predicates(models, sentences, vocabs, token_budget)
    if model.layout == "predicate" and not any(s.predicates for s in sentences):
        return list(sentences), [{} for _ in sentences]  # no predicate anywhere: nothing to label
    arguments: dict[tuple[int, int], tuple[Span, ...]] = {}
    senses: dict[tuple[int, int], dict] = {}
    whole: dict[int, dict] = {}
    tag_probs: list[dict[int, np.ndarray]] = [{} for _ in sentences]
    label = compiled(_label_batch, models, **options)
    for batch in inference_batches(sentences, vocabs, model.layout, token_budget):
        batch, decoded = label(batch)
        if "heads" in decoded:
            decoded["heads"] = to_conllu(decoded["heads"], batch["token_mask"])
        out = {k: np.asarray(v) for k, v in decoded.items()}
        index = batch["sentence_index"].numpy()
        lengths = batch["length"].numpy()
        if model.layout == "predicate":
            predicate_index, predicate_position = batch["predicate_index"].numpy(), batch["predicate_position"].numpy()
        for b, (s, n) in enumerate(zip(index, lengths)):
            if model.layout == "predicate":
                k = int(predicate_index[b])
                position = int(predicate_position[b])
                arguments[(int(s), k)] = tags_to_arguments(out["srl_tags"][b, :n], vocabs, position)
                if "senses" in out:
                    senses[(int(s), k)] = _sense(out, b)
                tag_probs[int(s)][position] = out["srl_tag_probs"][b, :n]
            else:
                whole[int(s)] = {key: value[b] for key, value in out.items()} | {"length": int(n)}
                for position in np.flatnonzero(out["predicate_flags"][b, :n]):
                    tag_probs[int(s)][int(position)] = out["srl_tag_probs"][b, position, :n]
    result = []
    for s, sentence in enumerate(sentences):
        if model.layout == "predicate":
            predicates = [
                dataclasses.replace(p, arguments=arguments[(s, k)], **senses.get((s, k), {}))
                for k, p in enumerate(sentence.predicates)
            ]
            result.append(dataclasses.replace(sentence, predicates=predicates))
        else:
            result.append(_sentence_from_outputs(sentence, whole[s], vocabs))
    return result, tag_probs


def identify_predicates(model, sentences: Sequence[Sentence], vocabs: Optional[Vocabularies] = None,
                        token_budget: int = 4096) -> list[list[int]]:
    """The token positions of the predicates that a predicate-layout model's identifier finds in each
    sentence (:mod:`lisa_tf.models.predicate_identifier`); an ensemble averages its models'
    predicate probabilities and keeps tokens above 0.5."""
    models = list(model) if isinstance(model, (list, tuple)) else [model]
    vocabs = vocabs if vocabs is not None else models[0].vocabularies()
    found: list[list[int]] = [[] for _ in sentences]
    identify = compiled(_predicate_flags, models)
    for batch in inference_batches(sentences, vocabs, "sentence", token_budget):
        flags, batch = identify(batch)
        flags = flags.numpy()
        for b, (s, n) in enumerate(zip(batch["sentence_index"].numpy(), batch["length"].numpy())):
            found[int(s)] = [int(i) for i in np.flatnonzero(flags[b, :n])]
    return found


def _predicate_flags(models: Sequence, batch: dict) -> tuple:
    """``(flags, features)``: the predicates the identifier of one model, or the averaged
    probabilities of an ensemble, find in a batch the first model's preprocessor has featurised."""
    batch = models[0].preprocessor(batch)
    if len(models) == 1:
        return models[0].identify_predicates(batch)["predicate_flags"], batch
    probs = sum(m.identify_predicates(batch)["predicate_probs"] for m in models) / len(models)
    return tf.logical_and(probs > 0.5, batch["token_mask"]), batch


def with_identified_predicates(model, sentences: Sequence[Sentence], vocabs: Optional[Vocabularies] = None,
                               token_budget: int = 4096) -> list[Sentence]:
    """``sentences`` with their predicates replaced by the ones :func:`identify_predicates` finds
    (no arguments yet; a gold predicate's lemma is kept where one stands, as LISA's output does)."""
    found = identify_predicates(model, sentences, vocabs, token_budget)
    result = []
    for sentence, positions in zip(sentences, found):
        gold_lemmas = {p.position: p.lemma for p in sentence.predicates}
        predicates = [Predicate(i, gold_lemmas.get(i, sentence.words[i].lower())) for i in positions]
        result.append(dataclasses.replace(sentence, predicates=predicates))
    return result


def _sense(out: dict, index) -> dict:
    """``sense`` and ``sense_source`` of the predicate at ``index`` of the decoded ``senses`` /
    ``sense_sources`` (numpy), for :class:`Predicate`."""
    roleset = out["senses"][index]
    roleset = roleset.decode() if isinstance(roleset, bytes) else str(roleset)
    return {"sense": roleset or None, "sense_source": SOURCES[int(out["sense_sources"][index])]}


def _sentence_from_outputs(sentence: Sentence, out: dict, vocabs: Vocabularies) -> Sentence:
    n = out["length"]
    gold_lemmas = {p.position: p.lemma for p in sentence.predicates}
    predicates = []
    for position in np.flatnonzero(out["predicate_flags"][:n]):
        position = int(position)
        lemma = gold_lemmas.get(position, sentence.words[position].lower())
        sense = _sense(out, position) if "senses" in out else {}
        predicates.append(Predicate(position, lemma, arguments=tags_to_arguments(out["srl_tags"][position, :n], vocabs,
                                                                                 position), **sense))
    # Layers the model does not predict are cleared, never passed through from the gold input.
    changes: dict = {"predicates": predicates, "heads": None, "dep_labels": None}
    if "pos" in out:
        changes["pos"] = [vocabs.pos.entry(int(i)) for i in out["pos"][:n]]
    if "heads" in out:
        changes["heads"] = [int(h) for h in out["heads"][:n]]
    if "dep_labels" in out:
        changes["dep_labels"] = [vocabs.dep_labels.entry(int(i)) for i in out["dep_labels"][:n]]
    return dataclasses.replace(sentence, **changes)
