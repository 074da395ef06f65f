"""Which predicates a user wants: all that the model finds, or the verbal ones only.

PropBank annotates nominal and adjectival predicates and, in the English Web Treebank release,
auxiliaries ("had", "been", "did", "'ll") as predicates too, which come back as frames without
arguments. Most SRL users expect verb frames only, as AllenNLP's SRL predictor gives (it labels
the tokens its tagger marks VERB, Universal Dependencies' tag that excludes auxiliaries and copulas).

A frame is **verbal** when the model tags its predicate as a verb (Penn Treebank ``VB*``) and, where
the model also predicts dependency labels (LISA), the token is not attached as an auxiliary or
copula (UD ``aux``, ``aux:pass``, ``cop``): the same split as UD's VERB vs AUX. A model that predicts
POS but no labels (SA) falls back to the auxiliary word forms, for frames without arguments.

The frames are the plain data of :mod:`lisa_tf.predictor` (also what a server client gets), so this
is pure Python.
"""

from __future__ import annotations

from typing import Sequence

#: The choices of ``--predicates`` / ``predicates=`` (the default first).
PREDICATE_KINDS = ("all", "verbal")
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
            raise ValueError("predicates 'verbal': this model predicts no POS tags, which tell verbs (LISA and SA "
                             "do); label all predicates, or give them by index")
        kept.append(dict(frame, predicates=[p for p in frame["predicates"] if is_verbal(frame, p)]))
    return kept
