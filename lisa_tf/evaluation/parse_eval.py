"""Parsing, POS and predicate-detection metrics over :class:`~data_pipeline.sentence.Sentence` lists.

* Attachment scores follow the CoNLL-X ``eval.pl`` default: a token whose form consists only of Unicode
  punctuation characters (general category ``P*``, the script's ``\\p{Punctuation}``) is not scored.
  UAS = tokens with the gold head / scored tokens; LAS = tokens with gold head *and* gold label / scored
  tokens (LISA, Strubell et al. 2018, §5 reports both on WSJ with punctuation excluded).
* POS accuracy is over every token (punctuation included, as is usual for tagging).
* Predicate detection compares predicate *positions* per sentence: precision, recall and F1 in percent
  (LISA §5 / Table 6).

Gold and predicted lists must hold the same number of sentences with the same lengths, and the gold form
decides what is punctuation; otherwise :class:`~lisa_tf.evaluation.EvaluationInputError` names the
sentence. All scores are percentages in [0, 100]; a score over zero items is 0. LAS is ``None`` (not
applicable) when the data's labels cannot score the predicted ones (:func:`scorable_labels`).
"""

from __future__ import annotations

import dataclasses
import unicodedata
from typing import Collection, Optional, Sequence

from data_pipeline.sentence import Sentence

from lisa_tf.evaluation import EvaluationInputError


def is_punctuation(form: str) -> bool:
    """True when ``form`` is non-empty and every character is Unicode punctuation (category ``P*``)."""
    return bool(form) and all(unicodedata.category(char).startswith("P") for char in form)


def _percent(part: int, whole: int) -> float:
    return 100.0 * part / whole if whole else 0.0


@dataclasses.dataclass(frozen=True)
class AttachmentScores:
    """Dependency attachment counts and scores.

    Attributes:
        tokens: all tokens compared; ``scored``: tokens left after excluding punctuation;
        ``punctuation``: tokens excluded; ``head_correct`` / ``labelled_correct``: scored tokens with
        the right head / right head and label.
    """

    tokens: int
    scored: int
    punctuation: int
    head_correct: int
    labelled_correct: int

    @property
    def uas(self) -> float:
        return _percent(self.head_correct, self.scored)

    @property
    def las(self) -> float:
        return _percent(self.labelled_correct, self.scored)


@dataclasses.dataclass(frozen=True)
class Accuracy:
    """``correct`` of ``total`` items; ``accuracy`` in percent."""

    correct: int
    total: int

    @property
    def accuracy(self) -> float:
        return _percent(self.correct, self.total)


@dataclasses.dataclass(frozen=True)
class DetectionScores:
    """Predicate detection: ``correct`` positions, ``predicted`` and ``gold`` totals; P / R / F1 in percent."""

    correct: int
    predicted: int
    gold: int

    @property
    def precision(self) -> float:
        return _percent(self.correct, self.predicted)

    @property
    def recall(self) -> float:
        return _percent(self.correct, self.gold)

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r > 0 else 0.0


def _check_pairs(gold: Sequence[Sentence], predicted: Sequence[Sentence]) -> None:
    if len(gold) != len(predicted):
        raise EvaluationInputError(
            None, None, f"expected as many predicted sentences as gold ones ({len(gold)}), found {len(predicted)}"
        )
    for index, (g, p) in enumerate(zip(gold, predicted)):
        if len(g) != len(p):
            raise EvaluationInputError(
                p.source, p.line,
                f"sentence {index} ({g.where()}): expected {len(g)} predicted tokens, found {len(p)}",
            )


def _layer(sentence: Sentence, name: str, index: int, side: str):
    values = getattr(sentence, name)
    if values is None:
        raise EvaluationInputError(sentence.source, sentence.line,
                                   f"sentence {index}: the {side} side has no {name} to score")
    if len(values) != len(sentence):
        raise EvaluationInputError(sentence.source, sentence.line,
                                   f"sentence {index}: expected {len(sentence)} {name}, found {len(values)}")
    return values


def attachment_scores(gold: Sequence[Sentence], predicted: Sequence[Sentence], *,
                      exclude_punctuation: bool = True, labelled: bool = True) -> AttachmentScores:
    """UAS / LAS of ``predicted`` heads and labels against ``gold`` (CoNLL-X ``eval.pl`` default).

    Args:
        exclude_punctuation: skip tokens whose gold form is all punctuation (the ``eval.pl`` default).
        labelled: also compare ``dep_labels`` (both sides must have them); with ``False`` LAS is 0.
    """
    _check_pairs(gold, predicted)
    tokens = scored = punctuation = heads_ok = labels_ok = 0
    for index, (g, p) in enumerate(zip(gold, predicted)):
        gold_heads = _layer(g, "heads", index, "gold")
        predicted_heads = _layer(p, "heads", index, "predicted")
        gold_labels = _layer(g, "dep_labels", index, "gold") if labelled else None
        predicted_labels = _layer(p, "dep_labels", index, "predicted") if labelled else None
        for i, form in enumerate(g.words):
            tokens += 1
            if exclude_punctuation and is_punctuation(form):
                punctuation += 1
                continue
            scored += 1
            if gold_heads[i] == predicted_heads[i]:
                heads_ok += 1
                if labelled and gold_labels[i] == predicted_labels[i]:
                    labels_ok += 1
    return AttachmentScores(tokens, scored, punctuation, heads_ok, labels_ok)


def pos_accuracy(gold: Sequence[Sentence], predicted: Sequence[Sentence], layer: str = "pos") -> Accuracy:
    """Share of tokens whose predicted POS equals the gold POS (all tokens, punctuation included);
    ``layer="upos"`` compares the universal tags."""
    _check_pairs(gold, predicted)
    correct = total = 0
    for index, (g, p) in enumerate(zip(gold, predicted)):
        gold_tags = _layer(g, layer, index, "gold")
        predicted_tags = _layer(p, layer, index, "predicted")
        total += len(gold_tags)
        correct += sum(a == b for a, b in zip(gold_tags, predicted_tags))
    return Accuracy(correct, total)


def predicate_detection(gold: Sequence[Sentence], predicted: Sequence[Sentence]) -> DetectionScores:
    """Precision / recall / F1 of predicted predicate positions against the gold ones."""
    _check_pairs(gold, predicted)
    correct = n_predicted = n_gold = 0
    for g, p in zip(gold, predicted):
        gold_positions = set(g.predicate_positions)
        predicted_positions = set(p.predicate_positions)
        correct += len(gold_positions & predicted_positions)
        n_predicted += len(predicted_positions)
        n_gold += len(gold_positions)
    return DetectionScores(correct, n_predicted, n_gold)


def scorable_labels(gold: Sequence[Sentence], predicted: Sequence[Sentence],
                    labels: Optional[Collection[str]] = None) -> bool:
    """Whether LAS can score ``predicted`` against ``gold``: both sides have dependency labels and
    the gold labels share at least one with ``labels``, the labels the predictions are drawn from (a
    model's vocabulary; default: the labels ``predicted`` holds). Disjoint sets are two labelling
    schemes (e.g. the labels converted from a ``.gold_conll`` file's constituency trees against a
    model's UD labels), on which every arc would count as wrong whatever the model predicted."""
    if not all(s.dep_labels is not None for s in gold) or not all(s.dep_labels is not None for s in predicted):
        return False
    if labels is None:
        labels = {label for s in predicted for label in s.dep_labels}
    known = set(labels)
    return any(label in known for s in gold for label in s.dep_labels)


def evaluate_parsing(gold: Sequence[Sentence], predicted: Sequence[Sentence], *,
                     layers: Optional[Sequence[str]] = None,
                     labels: Optional[Collection[str]] = None) -> dict[str, Optional[float]]:
    """The metrics whose layers both sides carry, as a flat dict of percentages.

    Keys: ``pos``; ``uas``, ``las`` (``las`` is ``None``, not applicable, when the labels cannot be
    scored: :func:`scorable_labels` with ``labels``, the predictions' label vocabulary);
    ``predicate_precision``, ``predicate_recall``, ``predicate_f1``.
    ``layers`` restricts to some of ``("pos", "parse", "predicates")``; by default a metric is computed
    when the gold side has its layer on every sentence (then the predicted side must have it too).
    """
    _check_pairs(gold, predicted)
    wanted = set(layers) if layers is not None else {
        name for name, attribute in (("pos", "pos"), ("parse", "heads"))
        if gold and all(getattr(s, attribute) is not None for s in gold)
    } | {"predicates"}
    unknown = wanted - {"pos", "parse", "predicates"}
    if unknown:
        raise ValueError(f"expected layers among pos, parse, predicates; found {sorted(unknown)}")
    out: dict[str, float] = {}
    if "pos" in wanted:
        out["pos"] = pos_accuracy(gold, predicted).accuracy
    if "parse" in wanted:
        labelled = all(s.dep_labels is not None for s in gold)
        scores = attachment_scores(gold, predicted, labelled=labelled)
        out["uas"] = scores.uas
        out["las"] = scores.las if labelled and scorable_labels(gold, predicted, labels) else None
    if "predicates" in wanted:
        detection = predicate_detection(gold, predicted)
        out.update(predicate_precision=detection.precision, predicate_recall=detection.recall,
                   predicate_f1=detection.f1)
    return out


def parse_scores(gold: Sequence[Sentence], predicted: Sequence[Sentence],
                 labels: Optional[Collection[str]] = None) -> dict:
    """Dev scores of a parser run, in the keys the training loop records: ``uas``, ``las``, ``pos`` and
    ``upos`` (percent, punctuation excluded from UAS/LAS; a tag accuracy when both sides have the
    tags; LAS ``None`` when the labels cannot be scored, :func:`scorable_labels` with ``labels``, the
    parser's label vocabulary), and ``precision`` = ``recall`` = ``f1`` = LAS — with
    exactly one head per token, labelled-arc precision and recall both equal LAS — so the best dev
    weights are those of the best LAS (of UAS without labels)."""
    labelled = all(s.dep_labels is not None for s in gold) and all(s.dep_labels is not None for s in predicted)
    attachment = attachment_scores(gold, predicted, labelled=labelled)
    labelled = labelled and scorable_labels(gold, predicted, labels)
    scores = {"uas": attachment.uas, "las": attachment.las if labelled else None}  # None: no labels to score
    for layer in ("pos", "upos"):
        if all(getattr(s, layer) is not None for s in [*gold, *predicted]):
            scores[layer] = pos_accuracy(gold, predicted, layer).accuracy
    main = attachment.las if labelled else attachment.uas
    scores.update(precision=main, recall=main, f1=main)
    return scores
