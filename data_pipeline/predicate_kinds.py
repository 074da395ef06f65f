"""Which predicates a user wants: all that the model finds, or the verbal ones only.

PropBank annotates nominal and adjectival predicates and, in the English Web Treebank release,
auxiliaries ("had", "been", "did", "'ll") as predicates too, which come back as frames without
arguments. Most SRL users expect verb frames only, as AllenNLP's SRL predictor gives (it labels
the tokens its tagger marks VERB, Universal Dependencies' tag that excludes auxiliaries and copulas).

A frame is **verbal** when the model tags its predicate as a verb (Penn Treebank ``VB*``) and, where
the model also predicts dependency labels (LISA), the token is not attached as an auxiliary or
copula (UD ``aux``, ``aux:pass``, ``cop``): the same split as UD's VERB vs AUX. A model that predicts
POS but no labels (SA) falls back to the auxiliary word forms, for frames without arguments.

The frames are the plain data of :mod:`lisa_tf.labelling.predictor` (also what a server client gets), so this
is pure Python. ``evaluate --predicates verbal`` scores the same frames: :func:`verbal_sentences`
keeps, in the gold sentences and the predicted ones alike, the predicates at the tokens the model's
own tags call verbal.
"""

from __future__ import annotations

import dataclasses
from typing import Sequence

from data_pipeline.sentence import Sentence

#: The choices of ``--predicates`` / ``predicates=`` (the default first).
PREDICATE_KINDS = ("all", "verbal")
#: Why a model without POS tags cannot keep verbal predicates only.
NO_POS_TAGS = "this model predicts no POS tags, which tell verbs (LISA and SA do)"
#: UD relations of auxiliaries and copulas (UPOS AUX).
AUXILIARY_RELATIONS = frozenset({"aux", "aux:pass", "cop"})
#: English auxiliary forms, for a model without dependency labels.
AUXILIARY_FORMS = frozenset({
    "be", "am", "is", "are", "was", "were", "been", "being", "'m", "'re", "'s",
    "have", "has", "had", "having", "'ve", "'d",
    "do", "does", "did", "will", "'ll", "would", "shall", "should", "may", "might", "can", "could", "must",
})


def check_kind(kind: str, name: str = "predicates") -> str:
    if kind not in PREDICATE_KINDS:
        raise ValueError(f"{name}: expected one of {', '.join(PREDICATE_KINDS)} or token indices per sentence, "
                         f"found {kind!r}")
    return kind


def is_verbal(frame: dict, predicate: dict) -> bool:
    """Whether ``predicate`` (one of ``frame["predicates"]``) is a verb frame (module docstring)."""
    token = frame["tokens"][predicate["token"]]
    if not token["pos"].startswith("VB"):
        return False
    if "deprel" in token:
        return token["deprel"] not in AUXILIARY_RELATIONS
    return bool(predicate["arguments"]) or token["text"].lower() not in AUXILIARY_FORMS


def verbal_only(frames: Sequence[dict]) -> list[dict]:
    """``frames`` with only their verbal predicates.

    Raises:
        ValueError: the frames carry no POS tags (a model that does not predict them cannot tell verbs).
    """
    kept = []
    for frame in frames:
        if frame["tokens"] and "pos" not in frame["tokens"][0]:  # whether or not this sentence has predicates
            raise ValueError(f"predicates 'verbal': {NO_POS_TAGS}; label all predicates, or give them by index")
        kept.append(dict(frame, predicates=[p for p in frame["predicates"] if is_verbal(frame, p)]))
    return kept


def verbal_sentences(gold: Sequence[Sentence], predicted: Sequence[Sentence]) -> tuple[list[Sentence], list[Sentence]]:
    """``gold`` and ``predicted`` (the model's labelling of the same tokens) with only the predicates
    at the tokens :func:`is_verbal` calls verbal by the model's own tags (its POS, and its dependency
    labels where it has them; for a token where it found no predicate, one without arguments), so a
    gold predicate and a predicted one at the same token are kept or dropped together.

    Raises:
        ValueError: a predicted sentence has no POS tags (:data:`NO_POS_TAGS`).
    """
    kept_gold, kept_predicted = [], []
    for g, p in zip(gold, predicted):
        if p.pos is None:
            raise ValueError(NO_POS_TAGS)
        tokens = [{"text": word, "pos": tag} for word, tag in zip(p.words, p.pos)]
        if p.dep_labels is not None:
            tokens = [dict(token, deprel=label) for token, label in zip(tokens, p.dep_labels)]
        frame = {"tokens": tokens}
        found = {q.position: [a for a in q.arguments if a.label != "V"] for q in p.predicates}
        verbal = {q.position for s in (g, p) for q in s.predicates
                  if is_verbal(frame, {"token": q.position, "arguments": found.get(q.position, [])})}
        for sentence, kept in ((g, kept_gold), (p, kept_predicted)):
            kept.append(dataclasses.replace(sentence, predicates=[q for q in sentence.predicates if q.position in verbal]))
    return kept_gold, kept_predicted
