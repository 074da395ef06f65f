"""Tests of lisa_tf.decoding.sense_choice: inflections, the lexicon built from the shipped frame index and
real PropBank-EWT predicates, and the in-graph choice."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from data_pipeline.frame_index import FrameIndex
from data_pipeline.readers.conll12 import read_conll12
from lisa_tf.decoding.sense_choice import SOURCES, SenseChoice, build_lexicon, regular_inflections, training_predicates
from tests.conftest import DATA


@pytest.fixture(scope="module")
def index():
    return FrameIndex.load()


@pytest.mark.parametrize("word, forms", [
    ("bark", {"barks", "barked", "barking"}),
    ("carry", {"carries", "carried", "carrying"}),
    ("stop", {"stops", "stopped", "stopping"}),
    ("make", {"makes", "making"}),
    ("die", {"dies", "died", "dying"}),
    ("push", {"pushes", "pushed", "pushing"}),
    ("agree", {"agrees", "agreed", "agreeing"}),
])
def test_regular_inflections(word, forms):
    assert forms <= regular_inflections(word)


def test_lexicon_from_the_index_and_training_forms(index):
    senses = ["bark.01", "kill.01", "serve.02", "give.01"]
    training = [("service", "serve.02"), ("Barked", "bark.01"), ("killed", None)]
    lexicon = build_lexicon(index, senses, training)
    row = {form: i for i, form in enumerate(lexicon["forms"])}

    def candidates(form):
        return [senses[i] for i in lexicon["candidates"][row[form]]]

    assert candidates("barked") == ["bark.01"] and candidates("barking") == ["bark.01"]
    assert candidates("kills") == ["kill.01"]
    # through the index's noun alias and through the training data alike
    assert candidates("service") == ["serve.02"]
    assert candidates("gave") == ["give.01"]  # an irregular form, from the word-form table
    # a word the index knows whose rolesets the model never saw: a fallback, the lowest-numbered roleset
    glimmer = row["glimmering"]
    assert lexicon["candidates"][glimmer] == []
    assert lexicon["rolesets"][lexicon["fallbacks"][glimmer]] == "glimmer.01"
    assert lexicon["rolesets"][: len(senses)] == senses
    # core roles from the frame files
    assert lexicon["core_roles"][0] == "012"  # bark.01: barker, utterance, hearer
    assert "xyzzyed" not in row


def test_choice_in_graph(index):
    senses = ["bark.01", "kill.01", "serve.02"]
    choice = SenseChoice(**build_lexicon(index, senses, [("service", "serve.02")]))
    words = tf.constant(["Barked", "glimmered", "xyzzy", "killing"])
    probs = tf.constant([[0.1, 0.8, 0.1], [0.3, 0.3, 0.4], [0.2, 0.2, 0.6], [0.5, 0.4, 0.1]])

    @tf.function
    def run(words, probs):
        out = choice(words, probs)
        return out["sense"], out["source"], choice.roleset_names(out["sense"]), \
            choice.allowed_core(out["sense"], ("0", "1", "2", "3"))

    sense, source, names, allowed = (t.numpy() for t in run(words, probs))
    # the head prefers kill.01 for "barked", but only bark.01 is a roleset of that word
    assert names.astype(str).tolist() == ["bark.01", "glimmer.01", "", "kill.01"]
    assert [SOURCES[i] for i in source] == ["model", "frame_index", "none", "model"]
    assert allowed[0].tolist() == [True, True, True, False]  # bark.01 has no ARG3
    assert allowed[2].all()  # no roleset: nothing ruled out
    again = SenseChoice.from_config(choice.get_config())
    assert again(words, probs)["sense"].numpy().tolist() == sense.tolist()


def test_the_graph_chooses_among_each_forms_own_candidates(index):
    """For every form of a lexicon built from real training predicates: with probabilities rising with
    the roleset id, the choice is the form's highest candidate, its fallback, or nothing."""
    train = read_conll12(DATA / "propbank-ewt" / "train.gold_conll.gz")[:1500]
    senses = sorted({r for _, r in training_predicates(train) if r})
    lexicon = build_lexicon(index, senses, training_predicates(train))
    choice = SenseChoice(**lexicon)
    forms = lexicon["forms"][::7]
    rows = list(range(0, len(lexicon["forms"]), 7))
    probs = np.broadcast_to(np.arange(1, len(senses) + 1, dtype=np.float32) / len(senses), (len(forms), len(senses)))
    out = choice(tf.constant(forms), tf.constant(probs))
    expected = [max(lexicon["candidates"][r]) if lexicon["candidates"][r] else lexicon["fallbacks"][r] for r in rows]
    assert out["sense"].numpy().tolist() == expected
    assert sum(e >= len(senses) for e in expected) > 100 and sum(e < len(senses) and e >= 0 for e in expected) > 100


def test_candidates_cover_ewt_dev_predicates(index):
    """Most dev predicates' gold roleset is among their word's candidates (benchmarks/sense_lexicon.py
    measures test)."""
    train = read_conll12(DATA / "propbank-ewt" / "train.gold_conll.gz")[:4000]
    senses = sorted({r for _, r in training_predicates(train) if r})
    lexicon = build_lexicon(index, senses, training_predicates(train))
    row = {form: i for i, form in enumerate(lexicon["forms"])}
    found = total = 0
    for sentence in read_conll12(DATA / "propbank-ewt" / "dev.gold_conll.gz")[:500]:
        for predicate in sentence.predicates:
            if predicate.roleset in senses:
                total += 1
                r = row.get(sentence.words[predicate.position].lower())
                found += r is not None and senses.index(predicate.roleset) in lexicon["candidates"][r]
    assert total > 300 and found / total > 0.97
    assert np.mean([len(c) for c in lexicon["candidates"] if c]) < 10
