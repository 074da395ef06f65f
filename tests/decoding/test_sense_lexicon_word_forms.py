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


def _choices(senses, form):
    """(candidates, fallback) of ``form`` in the lexicon of a model that knows ``senses``."""
    lexicon = build_lexicon(FrameIndex.load(DEFAULT_FRAME_INDEX), senses, [])
    row = lexicon["forms"].index(form)
    fallback = lexicon["fallbacks"][row]
    return [senses[i] for i in lexicon["candidates"][row]], lexicon["rolesets"][fallback] if fallback >= 0 else None


def test_a_verb_form_never_takes_a_roleset_of_the_adjective_it_shares_its_lemma_with():
    """``fine.04`` ("alright, ok") is the adjective's (alias pos ``j``), ``fine.01`` ("extract money because of
    misdeed") the verb's: a model that only saw the adjective gives "fined" the index's verb roleset as a
    fallback, not the adjective's; the bare lemma and the comparative keep the adjective's."""
    senses = ["fine.04", "far.01"]
    assert _choices(senses, "fined") == ([], "fine.01")
    assert _choices(senses, "fining")[0] == []
    assert _choices(senses, "fines") == ([], "fine.01")  # a verb's -s or a noun's plural: fine.01 has both
    assert _choices(senses, "fine")[0] == ["fine.04"]
    assert _choices(senses, "finer")[0] == ["fine.04"]


def test_a_regular_looking_form_of_a_word_without_verb_rolesets_is_not_its_verb_form():
    """``fared`` looks like far + -ed, but ``far`` has no verb roleset: it is fare's (fare.01), never far.01."""
    candidates, fallback = _choices(["far.01"], "fared")
    assert "far.01" not in candidates
    assert fallback is None or fallback.startswith("fare.")
