"""Predicate senses: accuracy, the most-frequent-sense baseline, and CoNLL-2009's semantic F1.

* **Sense accuracy** (CoNLL-2009 predicate disambiguation): of the gold predicates, the share whose
  predicted predicate at the same token has the same roleset (:attr:`Predicate.roleset`, ``kill.01``).
  A gold predicate the model did not find counts as wrong; score it on gold predicates to measure the
  sense head alone.
* **Most frequent sense** (the baseline every CoNLL-2009 system is held against): each predicate gets the
  roleset its lemma took most often in the training data, ``lemma.01`` for a lemma training never saw.
* **Semantic F1** (CoNLL-2009's labelled semantic score, Hajič et al. 2009, §2.3): a predicate's sense
  counts as one more dependency beside its arguments, so with srl-eval's argument counts

      P = (correct arguments + correct senses) / (predicted arguments + predicted predicates)
      R = (correct arguments + correct senses) / (gold arguments + gold predicates)

  CoNLL-2009 scores argument heads; here the arguments are srl-eval's spans, so this is the CoNLL-2009
  formula over CoNLL-2005 argument matching.
"""

from __future__ import annotations

import collections
import dataclasses
from typing import Iterable, Sequence

from data_pipeline.sentence import Sentence, roleset_id

from lisa_tf.evaluation import EvaluationInputError
from lisa_tf.evaluation.srl_eval import evaluate, prec_rec_f1


def _check_pairs(gold: Sequence[Sentence], predicted: Sequence[Sentence]) -> None:
    if len(gold) != len(predicted):
        raise EvaluationInputError(None, None, f"expected as many predicted sentences as gold ones ({len(gold)}), "
                                               f"found {len(predicted)}")


def sense_counts(gold: Sequence[Sentence], predicted: Sequence[Sentence]) -> dict:
    """``gold_predicates``, ``predicted_predicates`` and ``correct`` (a predicted predicate on a gold one's
    token with its roleset) over sentence pairs; gold predicates without a sense are not counted."""
    _check_pairs(gold, predicted)
    total = found = correct = 0
    for g, p in zip(gold, predicted):
        guesses = {q.position: q.roleset for q in p.predicates}
        found += len(p.predicates)
        for predicate in g.predicates:
            if predicate.roleset is None:
                continue
            total += 1
            correct += guesses.get(predicate.position) == predicate.roleset
    return {"gold_predicates": total, "predicted_predicates": found, "correct": correct}


def sense_scores(gold: Sequence[Sentence], predicted: Sequence[Sentence]) -> dict:
    """Sense accuracy (percent of the gold predicates) and CoNLL-2009's semantic P/R/F1 (see the module
    docstring), with the counts they come from."""
    counts = sense_counts(gold, predicted)
    arguments = evaluate(list(gold), list(predicted), warn=lambda message: None).overall
    correct = arguments.correct + counts["correct"]
    excess = arguments.excess + counts["predicted_predicates"] - counts["correct"]
    missed = arguments.missed + counts["gold_predicates"] - counts["correct"]
    precision, recall, f1 = prec_rec_f1(correct, excess, missed)
    accuracy = 100.0 * counts["correct"] / counts["gold_predicates"] if counts["gold_predicates"] else 0.0
    return {**counts, "accuracy": accuracy, "semantic": {"precision": precision, "recall": recall, "f1": f1}}


class MostFrequentSense:
    """The most-frequent-sense baseline: each lemma's most frequent roleset in ``training`` (ties go to the
    smaller roleset id), ``lemma.01`` for a lemma it never saw.

    Example:
    ```python
    baseline = MostFrequentSense(read_conll12("train.gold_conll"))
    baseline.roleset("be")            # "be.01"
    baseline.label(test_sentences)    # the test predicates with the baseline's rolesets
    ```
    """

    def __init__(self, training: Iterable[Sentence]):
        counts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
        for sentence in training:
            for predicate in sentence.predicates:
                if predicate.roleset is not None:
                    counts[predicate.lemma][predicate.roleset] += 1
        self._best = {lemma: min(c, key=lambda r: (-c[r], r)) for lemma, c in counts.items()}

    def roleset(self, lemma: str) -> str:
        """The baseline's roleset for a predicate lemma."""
        return self._best.get(lemma) or roleset_id(lemma, "01")

    def label(self, sentences: Sequence[Sentence]) -> list[Sentence]:
        """``sentences`` with every predicate's sense replaced by the baseline's roleset."""
        return [dataclasses.replace(s, predicates=[dataclasses.replace(p, sense=self.roleset(p.lemma))
                                                   for p in s.predicates]) for s in sentences]
