"""Sense accuracy, the most-frequent-sense baseline and CoNLL-2009's semantic F1 on real PropBank-EWT data."""

from __future__ import annotations

import dataclasses

import pytest

from data_pipeline.readers.conll12 import read_conll12
from lisa_tf.evaluation import EvaluationInputError
from lisa_tf.evaluation.senses import MostFrequentSense, sense_counts, sense_scores
from tests.conftest import DATA

TRAIN = DATA / "propbank-ewt" / "train.gold_conll.gz"
DEV = DATA / "propbank-ewt" / "dev.gold_conll.gz"


@pytest.fixture(scope="module")
def train():
    return read_conll12(TRAIN)


@pytest.fixture(scope="module")
def dev():
    return read_conll12(DEV)[:60]


def _with_wrong_senses(sentences, every):
    """Every ``every``-th predicate's sense replaced by a roleset of another lemma; returns the count."""
    changed, out, k = 0, [], 0
    for s in sentences:
        predicates = []
        for p in s.predicates:
            if k % every == 0:
                p = dataclasses.replace(p, sense="nonexistent.99")
                changed += 1
            predicates.append(p)
            k += 1
        out.append(dataclasses.replace(s, predicates=predicates))
    return out, changed


def test_gold_against_itself_is_perfect(dev):
    scores = sense_scores(dev, dev)
    assert scores["gold_predicates"] == sum(len(s.predicates) for s in dev) > 50
    assert scores["accuracy"] == 100.0 and scores["semantic"]["f1"] == 100.0


def test_wrong_senses_lower_accuracy_and_semantic_f1_by_the_formula(dev):
    wrong, changed = _with_wrong_senses(dev, every=4)
    scores = sense_scores(dev, wrong)
    n = sum(len(s.predicates) for s in dev)
    assert scores["correct"] == n - changed
    assert scores["accuracy"] == pytest.approx(100.0 * (n - changed) / n)
    # every argument is right, so P = R = (arguments + correct senses) / (arguments + predicates)
    arguments = sum(s.num_arguments() for s in dev)
    expected = 100.0 * (arguments + n - changed) / (arguments + n)
    assert scores["semantic"]["precision"] == pytest.approx(expected)
    assert scores["semantic"]["recall"] == pytest.approx(expected)


def test_a_missing_predicate_counts_as_a_wrong_sense_and_a_missed_dependency(dev):
    dropped = [dataclasses.replace(dev[0], predicates=dev[0].predicates[1:])] + list(dev[1:])
    counts = sense_counts(dev, dropped)
    assert counts["gold_predicates"] - counts["correct"] == 1
    assert counts["predicted_predicates"] == counts["gold_predicates"] - 1
    assert sense_scores(dev, dropped)["semantic"]["precision"] == 100.0


def test_unequal_sentence_counts_are_refused(dev):
    with pytest.raises(EvaluationInputError, match="expected as many predicted sentences"):
        sense_counts(dev, dev[:-1])


def test_most_frequent_sense_is_the_majority_roleset_of_the_training_data(train):
    baseline = MostFrequentSense(train)
    # counted in train.gold_conll.gz: be.01 4,832 times, be.03 2,401, be.02 368; have.01 1,250, have.03 847
    assert baseline.roleset("be") == "be.01"
    assert baseline.roleset("have") == "have.01"
    assert baseline.roleset("kill") == "kill.01"
    assert baseline.roleset("zzyzx") == "zzyzx.01"  # a lemma training never saw


def test_most_frequent_sense_labels_every_predicate_and_is_beaten_by_gold(train, dev):
    labelled = MostFrequentSense(train).label(dev)
    assert [len(s.predicates) for s in labelled] == [len(s.predicates) for s in dev]
    accuracy = sense_scores(dev, labelled)["accuracy"]
    assert 50.0 < accuracy < 100.0  # the baseline is right often, not always (be.03 is frequent)


def test_the_baseline_counts_the_sentences_the_model_was_trained_on(train, dev):
    """A run trained on the first 20 sentences (``data.max_train_sentences``) is compared with the
    most frequent senses of those 20, not of the whole file."""
    from lisa_tf.evaluation.runs import _sense_metrics

    metrics = _sense_metrics(dev, dev, (str(TRAIN), "conll12", 20))["most_frequent_sense"]
    assert metrics["training_data"] == f"{TRAIN}, first 20 sentences"
    assert metrics["accuracy"] == sense_scores(dev, MostFrequentSense(train[:20]).label(dev))["accuracy"]
    whole = _sense_metrics(dev, dev, (str(TRAIN), "conll12", 0))["most_frequent_sense"]
    assert whole["training_data"] == str(TRAIN)
    assert whole["accuracy"] == sense_scores(dev, MostFrequentSense(train).label(dev))["accuracy"] > metrics["accuracy"]
