"""Tests of the sense lexicon's word forms (lisa_tf.decoding.sense_choice with data_pipeline.word_forms) on
the shipped frame index: irregular forms find their lemma's rolesets, and a word that only looks like a
regular inflection (``former``) does not take the rolesets of the word it looks like (``form``)."""

from __future__ import annotations

import pytest

from data_pipeline.frame_index import DEFAULT_FRAME_INDEX, FrameIndex
from lisa_tf.decoding.sense_choice import build_lexicon

SENSES = ["lend.01", "slide.01", "rise.01", "uphold.01", "take.01", "go.01", "form.01", "find.01"]


@pytest.fixture(scope="module")
def candidates():
    lexicon = build_lexicon(FrameIndex.load(DEFAULT_FRAME_INDEX), SENSES, [])
    row = {form: i for i, form in enumerate(lexicon["forms"])}
    return lambda form: [SENSES[i] for i in lexicon["candidates"][row[form]]] if form in row else []


@pytest.mark.parametrize("form, roleset", [
    ("lent", "lend.01"), ("slid", "slide.01"), ("risen", "rise.01"), ("rose", "rise.01"),
    ("upheld", "uphold.01"), ("took", "take.01"), ("taken", "take.01"), ("went", "go.01"), ("found", "find.01"),
])
def test_irregular_forms_get_their_lemmas_rolesets(candidates, form, roleset):
    assert roleset in candidates(form)


@pytest.mark.parametrize("form, roleset", [("lends", "lend.01"), ("sliding", "slide.01"), ("formed", "form.01")])
def test_regular_forms_still_do(candidates, form, roleset):
    assert roleset in candidates(form)


def test_former_is_no_form_of_form():
    index = FrameIndex.load(DEFAULT_FRAME_INDEX)
    lexicon = build_lexicon(index, ["form.01", "former.01"], [])
    row = lexicon["forms"].index("former")
    assert [["form.01", "former.01"][i] for i in lexicon["candidates"][row]] == ["former.01"]
    # a model that never saw former.01: the index's own roleset as a fallback, not form.01
    lexicon = build_lexicon(index, ["form.01"], [])
    row = lexicon["forms"].index("former")
    assert lexicon["candidates"][row] == []
    assert lexicon["rolesets"][lexicon["fallbacks"][row]] == "former.01"
