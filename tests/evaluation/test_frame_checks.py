"""Tests of lisa_tf.evaluation.frame_checks on real PropBank-EWT frames and on broken copies of them."""

from __future__ import annotations

import dataclasses

import pytest

from data_pipeline.frame_index import FrameIndex
from data_pipeline.readers.conll12 import read_conll12
from data_pipeline.sentence import Span
from lisa_tf.evaluation.frame_checks import frame_checks_table, frame_violations
from tests.conftest import DATA


@pytest.fixture(scope="module")
def gold():
    return read_conll12(DATA / "propbank-ewt" / "dev.gold_conll.gz")[:300]


@pytest.fixture(scope="module")
def index():
    return FrameIndex.load()


def _relabel(sentence, k, old, new):
    predicate = sentence.predicates[k]
    arguments = tuple(dataclasses.replace(a, label=new) if a.label == old else a for a in predicate.arguments)
    predicates = list(sentence.predicates)
    predicates[k] = dataclasses.replace(predicate, arguments=arguments)
    return dataclasses.replace(sentence, predicates=predicates)


def test_gold_keeps_the_constraints_and_each_break_is_counted(gold, index):
    checks = frame_violations(gold, index)
    assert checks["predicates"] == sum(len(s.predicates) for s in gold) > 500
    assert checks["repeated_core_role"] == checks["continuation_before_role"] == checks["reference_before_role"] == 0
    assert checks["role_outside_roleset"] <= 2
    s, k = next((s, k) for s, sentence in enumerate(gold) for k, p in enumerate(sentence.predicates)
                if {"ARG0", "ARG1"} <= {a.label for a in p.arguments})
    broken = list(gold)
    broken[s] = _relabel(gold[s], k, "ARG1", "ARG0")
    assert frame_violations(broken)["repeated_core_role"] == 1
    first = min((a for a in gold[s].predicates[k].arguments if a.label in ("ARG0", "ARG1")), key=lambda a: a.start)
    broken[s] = _relabel(gold[s], k, first.label, "R-" + first.label)
    assert frame_violations(broken)["reference_before_role"] == 1
    assert "| repeated core role | 0 |" in frame_checks_table(checks)


def test_a_role_the_roleset_lacks(gold, index):
    s, k = next((s, k) for s, sentence in enumerate(gold) for k, p in enumerate(sentence.predicates)
                if p.sense == "say.01" and "ARG1" in {a.label for a in p.arguments})
    sentence = gold[s]
    predicate = sentence.predicates[k]
    extra = Span(predicate.position, predicate.position, "ARG5")  # say.01 has ARG0-ARG3 only
    changed = dataclasses.replace(sentence, predicates=[dataclasses.replace(predicate, arguments=predicate.arguments + (extra,))])
    assert frame_violations([changed], index)["role_outside_roleset"] == 1
