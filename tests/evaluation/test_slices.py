"""Scores by EWT genre and on unseen-word predicates (:mod:`lisa_tf.evaluation.slices`), on the
shipped PropBank-EWT test split."""

from __future__ import annotations

import dataclasses
import functools

import pytest

from data_pipeline.splits import read_split
from lisa_tf.evaluation.slices import EWT_GENRES, genre, scores_by_genre, training_words, unseen_predicate_scores
from tests.conftest import ROOT

DATA = ROOT / "data" / "propbank-ewt"


@functools.lru_cache(maxsize=None)
def _split(name: str, limit: int = 0):
    return tuple(read_split(str(DATA / f"{name}.gold_conll.gz"), "conll12", None, limit))


def _without_arguments(sentence):
    return dataclasses.replace(sentence, predicates=[dataclasses.replace(p, arguments=tuple(
        a for a in p.arguments if a.label == "V")) for p in sentence.predicates])


def test_every_test_sentence_has_one_of_the_five_genres_and_each_genre_is_scored_alone():
    gold = list(_split("test"))
    genres = [genre(s) for s in gold]
    assert set(genres) == set(EWT_GENRES) and None not in genres
    assert gold[0].doc_id.startswith("google/ewt/weblog/") and genres[0] == "weblog"
    perfect = scores_by_genre(gold, gold)
    assert list(perfect) == list(EWT_GENRES)
    assert sum(v["sentences"] for v in perfect.values()) == len(gold)
    assert all(v["f1"] == 100.0 for v in perfect.values())
    # the email sentences lose their arguments: only email's recall drops
    damaged = [_without_arguments(s) if g == "email" else s for s, g in zip(gold, genres)]
    scores = scores_by_genre(gold, damaged)
    assert scores["email"]["recall"] == 0.0
    assert all(scores[name]["f1"] == 100.0 for name in EWT_GENRES if name != "email")


def test_unseen_predicates_are_those_whose_word_training_never_had():
    train = _split("train", 3000)
    seen = training_words(train)
    gold = list(_split("test"))
    unseen = sum(1 for s in gold for p in s.predicates if s.words[p.position].lower() not in seen)
    assert 50 < unseen < sum(len(s.predicates) for s in gold) / 4
    assert unseen_predicate_scores(gold, gold, seen) == {"precision": 100.0, "recall": 100.0, "f1": 100.0,
                                                          "predicates": unseen}
    # a model that gives no frame to an unseen word: recall 0 on this slice, whatever it does elsewhere
    missing = [dataclasses.replace(s, predicates=[p for p in s.predicates if s.words[p.position].lower() in seen])
               for s in gold]
    assert unseen_predicate_scores(gold, missing, seen)["recall"] == 0.0
    assert unseen_predicate_scores(gold, missing, set())["recall"] == pytest.approx(
        100.0 * (1 - _arguments_of_unseen(gold, seen) / _arguments_of_unseen(gold, set())), abs=0.01)


def _arguments_of_unseen(gold, seen) -> int:
    return sum(sum(a.label != "V" for a in p.arguments) for s in gold for p in s.predicates
               if s.words[p.position].lower() not in seen)
