"""Tests of lisa_tf.decoding.own_frames: a user's own frame index merged over a model's word-form lexicon.
The lexicon is written by hand (a model that knows kill.01 and lend.01, and bark.01 only as a fallback);
the user's index is built by ``frame_index build`` from frame files written here."""

from __future__ import annotations

import copy

import pytest

from data_pipeline.frame_index import FrameIndex
from lisa_tf.decoding.own_frames import lexicon_with_frames
from tests.own_frames import BLORF, KILL, build_own_frames, frame_file

BARK_02 = frame_file("bark", "bark.02", "strip the bark off", [("0", "PAG", "stripper"), ("1", "PPT", "tree")])
LENT = frame_file("lend", "lend.01", "give for a while", [("0", "PAG", "lender"), ("1", "PPT", "loan")],
                  aliases=["lend", "lent"])

#: A model's lexicon: its sense head scores kill.01 and lend.01; "barked" has bark.01 as fallback.
LEXICON = {"forms": ["barked", "killed", "lending"], "candidates": [[], [0], [1]], "fallbacks": [2, -1, -1],
           "rolesets": ["kill.01", "lend.01", "bark.01"], "core_roles": ["012", "012", "012"]}


@pytest.fixture(scope="module")
def merged(tmp_path_factory):
    path = build_own_frames(tmp_path_factory.mktemp("own"), {"blorf.xml": BLORF, "kill.xml": KILL,
                                                             "bark.xml": BARK_02, "lend.xml": LENT})
    given = copy.deepcopy(LEXICON)
    out = lexicon_with_frames(given, 2, FrameIndex.load(path))
    assert given == LEXICON  # the model's own lexicon is left as it was
    return out


def entry(lexicon: dict, form: str) -> tuple[list[str], str]:
    """A form's candidates and fallback, by roleset id."""
    k = lexicon["forms"].index(form)
    fallback = lexicon["fallbacks"][k]
    return [lexicon["rolesets"][i] for i in lexicon["candidates"][k]], lexicon["rolesets"][fallback] if fallback >= 0 else ""


def core(lexicon: dict, roleset: str) -> str:
    return lexicon["core_roles"][lexicon["rolesets"].index(roleset)]


def test_a_lemma_of_the_users_frames_is_a_fallback_of_its_forms(merged):
    for form in ("blorf", "blorfs", "blorfed", "blorfing"):
        assert entry(merged, form) == ([], "blorf.01")
    assert core(merged, "blorf.01") == "01"  # the decoding allows the user's roleset's core roles only


def test_the_models_own_candidates_stay_and_a_redefined_roleset_takes_the_users_core_roles(merged):
    assert entry(merged, "killed") == (["kill.01"], "")
    assert entry(merged, "lending") == (["lend.01"], "")
    assert core(merged, "kill.01") == "01" and core(merged, "lend.01") == "01"  # the user's definitions
    assert core(merged, "bark.01") == "012"  # not in the user's files: as the model had it


def test_a_roleset_the_model_knows_becomes_a_candidate_of_a_form_the_users_frames_add(merged):
    assert entry(merged, "lent") == (["lend.01"], "")  # the user's alias: the sense head chooses, source model


def test_a_form_with_a_shipped_fallback_keeps_the_first_roleset_of_both(merged):
    assert entry(merged, "barked") == ([], "bark.01")  # bark.01 before the user's bark.02
    assert entry(merged, "barking") == ([], "bark.02")  # a form the model's lexicon lacked: the user's
    assert merged["rolesets"][:3] == LEXICON["rolesets"]  # the sense head's ids and old fallbacks keep their place
    assert sorted(merged["rolesets"][3:]) == ["bark.02", "blorf.01"]
    assert merged["forms"] == sorted(merged["forms"])
