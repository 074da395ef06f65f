"""SRL scores on slices of a test set that tell a user what to expect on their own text: by genre
(UD English-EWT's five: weblog, newsgroup, email, reviews, answers) and on predicates whose word never
occurs in the training data.

* **Genre** comes from the document id: EWT's ``.gold_conll`` documents are ``google/ewt/<genre>/…``.
  Sentences of documents without a genre in their id are left out of this slice.
* **Unseen predicates**: a predicate whose word (lower-cased) is not among the training sentences'
  words. Both sides keep only the predicates whose word is unseen, so recall counts the arguments of
  unseen gold predicates that the model missed (no frame at all included), and precision those it
  labelled wrongly; srl-eval's single run, as everywhere (:mod:`lisa_tf.evaluation.srl_eval`).

Example:
```python
scores_by_genre(gold, predicted)["email"]["f1"]
unseen_predicate_scores(gold, predicted, train_words)["f1"]
```
"""

from __future__ import annotations

import dataclasses
from typing import Iterable, Optional, Sequence

from data_pipeline.sentence import Sentence

from lisa_tf.evaluation.srl_eval import score

#: UD English-EWT's genres, as its document ids name them.
EWT_GENRES = ("weblog", "newsgroup", "email", "reviews", "answers")


def genre(sentence: Sentence) -> Optional[str]:
    """The EWT genre of the sentence's document (``google/ewt/email/…`` → ``email``), or None."""
    parts = (sentence.doc_id or "").split("/")
    return next((part for part in parts if part in EWT_GENRES), None)


def scores_by_genre(gold: Sequence[Sentence], predicted: Sequence[Sentence]) -> dict:
    """``{genre: {"precision", "recall", "f1", "sentences", "predicates"}}`` for each genre present,
    in :data:`EWT_GENRES` order."""
    groups: dict = {}
    for g, p in zip(gold, predicted):
        name = genre(g)
        if name is not None:
            groups.setdefault(name, ([], []))
            groups[name][0].append(g)
            groups[name][1].append(p)
    result = {}
    for name in (n for n in EWT_GENRES if n in groups):
        golds, predictions = groups[name]
        scores = score(golds, predictions)
        result[name] = {"precision": scores["precision"], "recall": scores["recall"], "f1": scores["f1"],
                        "sentences": len(golds), "predicates": sum(len(s.predicates) for s in golds)}
    return result


def training_words(sentences: Iterable[Sentence]) -> set[str]:
    """The lower-cased words of the training sentences."""
    return {word.lower() for sentence in sentences for word in sentence.words}


def _unseen_only(sentence: Sentence, seen: set[str]) -> Sentence:
    kept = [p for p in sentence.predicates if sentence.words[p.position].lower() not in seen]
    return dataclasses.replace(sentence, predicates=kept)


def unseen_predicate_scores(gold: Sequence[Sentence], predicted: Sequence[Sentence], seen: set[str]) -> dict:
    """Scores on the predicates whose word is not in ``seen`` (:func:`training_words`):
    ``{"precision", "recall", "f1", "predicates"}`` (``predicates``: how many gold ones)."""
    golds = [_unseen_only(s, seen) for s in gold]
    scores = score(golds, [_unseen_only(s, seen) for s in predicted])
    return {"precision": scores["precision"], "recall": scores["recall"], "f1": scores["f1"],
            "predicates": sum(len(s.predicates) for s in golds)}
