"""A user's own frame index merged over the shipped one (DESIGN.md: "theirs win on a clash"), without
retraining: a made-up verb of the user's files (``blorf``) gets the user's roleset and meanings, a
roleset the user redefines (kill.01) keeps the model's choice with the user's meanings and core roles,
and a predicate the user's files do not touch (``barked``) keeps the shipped meanings and its labels.
Through ``lisa_tf.load(..., frames=)`` (the tiny DeepAtt run: given predicates, so what is labelled
does not hang on a tiny model finding a made-up verb), and ``predict --frames`` with the shipped
``srl-fast`` through its cached export, whose key the frames file is part of."""

from __future__ import annotations

import json

import pytest

import lisa_tf
from tests.own_frames import BLORF, KILL, build_own_frames

BLORFED = ["They", "blorfed", "the", "boards", "."]
BARKED = ["The", "dog", "barked", "at", "the", "mailman", "."]
KILLED = ["Guerrillas", "killed", "an", "engineer", "."]


@pytest.fixture(scope="module")
def own_frames(tmp_path_factory):
    return build_own_frames(tmp_path_factory.mktemp("own_frames"), {"blorf.xml": BLORF, "kill.xml": KILL})


def spans(predicate: dict) -> list[tuple]:
    return [(a["role"], a["token_start"], a["token_end"]) for a in predicate["arguments"]]


def test_load_with_own_frames_adds_their_verb_and_keeps_the_shipped_meanings(deepatt_run, own_frames, capsys):
    import tensorflow as tf

    tokens, predicates = [BLORFED, BARKED, KILLED], [[1], [2], [1]]
    plain = [s["predicates"][0] for s in lisa_tf.load(deepatt_run).predict(tokens=tokens, predicates=predicates)]
    predictor = lisa_tf.load(deepatt_run, frames=own_frames)
    blorfed, barked, killed = [s["predicates"][0] for s in predictor.predict(tokens=tokens, predicates=predicates)]

    # the clash is reported, once, where the indexes are merged
    assert capsys.readouterr().err.count(f"frames {own_frames}: 1 of its rolesets replace the shipped ones of the "
                                         "same id (kill.01)") == 1
    assert (plain[0]["sense"], plain[0]["sense_source"]) == (None, "none")  # unknown without the user's files
    assert (blorfed["sense"], blorfed["sense_source"], blorfed["sense_name"]) == (
        "blorf.01", "frame_index", "fasten with a blorf")
    mine = {"ARG0": "fastener", "ARG1": "thing fastened"}
    assert all(a.get("description") == mine.get(a["role"]) for a in blorfed["arguments"] if a["role"] in mine)
    assert not {a["role"] for a in blorfed["arguments"]} & {"ARG2", "ARG3", "ARG4", "ARG5"}  # blorf.01 has 2 roles

    assert barked["sense"] == plain[1]["sense"] == "bark.01"
    assert barked["sense_name"] == "vocalize like a dog"  # the shipped meaning, kept
    assert all(a["description"] == {"ARG0": "barker", "ARG1": "utterance", "ARG2": "hearer"}[a["role"]]
               for a in barked["arguments"] if a["role"] in ("ARG0", "ARG1", "ARG2"))
    assert barked == plain[1]  # everything the user's files do not touch: as without them

    assert "kill.01" in predictor.model.sense_labels
    assert (killed["sense"], killed["sense_source"], killed["sense_name"]) == ("kill.01", "model", "end the life of")
    assert plain[2]["sense_name"] == "cause to die, murder"

    # the frame-constrained decoding's core roles follow the user's rolesets (PropBank's kill.01 has ARG2)
    choice, roles = predictor.model.sense_choice, predictor.model.core_role_tags.roles
    chosen = choice(tf.constant(["blorfed", "killed", "barked"]), tf.fill([3, len(predictor.model.sense_labels)], 0.5))
    allowed = choice.allowed_core(chosen["sense"], roles).numpy()
    assert [{r for r, a in zip(roles, row) if a} for row in allowed] == [
        {"0", "1"} & set(roles), {"0", "1"} & set(roles), {"0", "1", "2"} & set(roles)]
    assert {"0", "1", "2"} <= set(roles)


def test_predict_frames_builds_its_own_export_of_a_shipped_model(own_frames, tmp_path, capsys):
    import shutil

    import tensorflow as tf

    from export.cache_build import build_export
    from lisa_tf.packages.export_cache import export_base
    from lisa_tf.packages.finding import SHIPPED
    from lisa_tf_cli.main import main

    assert main(["predict", "--model", "srl-fast", "--frames", str(own_frames), "--format", "jsonl",
                 "They blorfed the boards together."]) == 0
    [blorfed] = json.loads(capsys.readouterr().out)["predicates"]
    assert (blorfed["text"], blorfed["sense"], blorfed["sense_source"], blorfed["sense_name"]) == (
        "blorfed", "blorf.01", "frame_index", "fasten with a blorf")
    assert {a["description"] for a in blorfed["arguments"] if a["role"] in ("ARG0", "ARG1")} == {
        "fastener", "thing fastened"}

    # predict labelled through its labelling export, built with the user's frames
    assert (export_base(SHIPPED / "srl-fast", own_frames, labelling=True) / "1" / "saved_model.pb").exists()
    # the server's export holds the user's lemma and the merged meanings in-graph: what serve answers
    version = build_export(SHIPPED / "srl-fast", report=lambda line: None, frames=own_frames) / "1"
    out = tf.saved_model.load(str(version)).signatures["text"](text=tf.constant(["They blorfed the boards together."]))
    k = list(out["predicate_positions"].numpy()[0]).index(1)
    assert (out["senses"][0, k].numpy(), out["sense_sources"][0, k].numpy(), out["sense_names"][0, k].numpy()) == (
        b"blorf.01", b"frame_index", b"fasten with a blorf")
    meanings = dict(zip(out["argument_roles"][0, k].numpy(), out["argument_descriptions"][0, k].numpy()))
    assert meanings[b"ARG0"] == b"fastener" and meanings[b"ARG1"] == b"thing fastened"
    names = (version / "assets" / "sense_names.tsv").read_text(encoding="utf-8").splitlines()
    assert {"bark.01\tvocalize like a dog", "kill.01\tend the life of", "blorf.01\tfasten with a blorf"} <= set(names)

    # another frames file (or none) is another export, never this one
    other = tmp_path / "other.json.gz"
    shutil.copy(own_frames, other)
    other.write_bytes(other.read_bytes() + b"\n")
    keys = {export_base(SHIPPED / "srl-fast", frames) for frames in (own_frames, other, None)}
    assert len(keys) == 3
