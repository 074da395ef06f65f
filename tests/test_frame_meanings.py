"""The meanings every output shows with a predicted sense (:mod:`lisa_tf.decoding.frame_meanings`), from the shipped
PropBank frame index, on real EWT sentences; and how ``predict``'s text and CoNLL-2012 outputs show them."""

from __future__ import annotations

import io

import pytest

from data_pipeline.sentence import Span
from data_pipeline.tokenizer import tokenize
from lisa_tf.decoding import frame_meanings
from lisa_tf.labelling.predictor import frame
from lisa_tf_cli.commands.predict import _write

# "The dog barked at the mailman." from the issue; the second is an EWT training sentence.
BARK = "The dog barked at the mailman."
KILL = "Guerrillas killed an engineer, Asi Ali, from Tikrit."


def _bark(*sense):
    """The issue's sentence as :func:`frame` answers it for one predicate row: a 3-tuple without
    ``sense``, else the 4-tuple with it."""
    tokens = tokenize(BARK)
    return frame(BARK, tokens, [(2, [Span(0, 1, "ARG0"), Span(3, 5, "ARG2")], [0.5] * len(tokens), *sense)])


def test_a_model_sense_gives_the_roleset_name_and_each_roles_meaning():
    [predicate] = _bark(("bark.01", "model"))["predicates"]
    assert (predicate["sense"], predicate["sense_source"], predicate["sense_name"]) == (
        "bark.01", "model", "vocalize like a dog")
    assert [(a["role"], a["description"], a["function_tag"], a["vn_role"]) for a in predicate["arguments"]] == [
        ("ARG0", "barker", "PAG", "agent"), ("ARG2", "hearer", "GOL", "recipient")]
    assert predicate["description"] == "[ARG0 barker: The dog] [V: barked] [ARG2 hearer: at the mailman] ."


def test_a_model_without_senses_answers_as_before():
    [predicate] = _bark()["predicates"]
    assert not {"sense", "sense_source", "sense_name"} & set(predicate)
    assert all(set(a) == {"role", "token_start", "token_end", "start", "end", "text", "score"}
               for a in predicate["arguments"])
    assert predicate["description"] == "[ARG0: The dog] [V: barked] [ARG2: at the mailman] ."


def test_modifiers_and_references_continuations_and_rolesets_outside_the_index():
    index = frame_meanings.frame_index()
    assert frame_meanings.role_meaning(index, "kill.01", "ARGM-TMP") == {}  # no role of kill.01
    assert frame_meanings.role_meaning(index, "kill.01", "R-ARG0")["description"] == "killer"
    assert frame_meanings.role_meaning(index, "kill.01", "C-ARG1")["description"] == "corpse"
    # have.LV marks a light verb in PropBank-EWT: a sense the models learn that is no roleset of the index
    assert frame_meanings.sense_fields(index, "have.LV", "model") == {
        "sense": "have.LV", "sense_source": "model", "sense_name": None}
    assert frame_meanings.role_meaning(index, "have.LV", "ARG0") == {}
    with pytest.raises(ValueError, match="sense source: expected one of none, model, frame_index, found 'gold'"):
        frame_meanings.sense_fields(index, "kill.01", "gold")


def _pretty(result) -> str:
    out = io.StringIO()
    _write(result, "pretty", out)
    return out.getvalue()


def test_the_text_output_marks_a_fallback_and_shows_no_sense_without_a_roleset():
    assert _pretty(_bark(("bark.01", "model"))).splitlines()[1] == (
        "  barked (bark.01, vocalize like a dog): [ARG0 barker: The dog] [V: barked] [ARG2 hearer: at the mailman] .")
    assert _pretty(_bark(("bark.01", "frame_index"))).splitlines()[1] == (
        "  barked (bark.01?, vocalize like a dog): [ARG0 barker: The dog] [V: barked] [ARG2 hearer: at the mailman] .")
    none = _bark(("", "none"))
    assert none["predicates"][0]["sense"] is None and none["predicates"][0]["sense_source"] == "none"
    assert _pretty(none).splitlines()[1] == "  barked: [ARG0: The dog] [V: barked] [ARG2: at the mailman] ."
    assert _pretty(_bark()).splitlines()[1] == "  barked: [ARG0: The dog] [V: barked] [ARG2: at the mailman] ."


def test_the_text_output_escapes_control_characters_in_names_descriptions_and_text():
    """The text output goes to a terminal: a roleset name or role description holding escape sequences
    (red text, a window title) is shown escaped, not obeyed; a tab is kept."""
    result = _bark(("bark.01", "model"))
    [predicate] = result["predicates"]
    predicate["sense_name"] = "\x1b]0;TITLE\x07vocalize like a dog"
    predicate["description"] = predicate["description"].replace("barker", "\x1b[31mbarker\x1b[0m")
    result["text"] = "The dog\tbarked\x9b at the mailman."
    lines = _pretty(result).splitlines()
    assert lines[:2] == [
        "The dog\tbarked\\x9b at the mailman.",
        "  barked (bark.01, \\x1b]0;TITLE\\x07vocalize like a dog): [ARG0 \\x1b[31mbarker\\x1b[0m: The dog] "
        "[V: barked] [ARG2 hearer: at the mailman] ."]
    assert not {"\x1b", "\x07", "\x9b"} & set(_pretty(result))


def test_conll12_output_writes_the_rolesets_lemma_and_sense_number(tmp_path):
    from data_pipeline.readers.conll12 import read_conll12

    tokens = tokenize(KILL)
    rows = [(1, [Span(0, 0, "ARG0"), Span(2, 9, "ARG1")], [0.9] * len(tokens), ("kill.01", "model"))]
    path = tmp_path / "out.gold_conll"
    with open(path, "w") as out:
        out.write("#begin document (predict); part 000\n")
        _write(frame(KILL, tokens, rows, pos=["NNS", "VBD"] + ["NN"] * (len(tokens) - 2)), "conll12", out)
        _write(_bark(("", "none")) | {"tokens": [t | {"pos": "NN"} for t in _bark(("", "none"))["tokens"]]},
               "conll12", out)
        out.write("#end document\n")
    killed = next(line.split() for line in path.read_text().splitlines() if " killed " in line)
    assert killed[6:8] == ["kill", "01"]  # as OntoNotes' .gold_conll: lemma and frameset number
    barked = next(line.split() for line in path.read_text().splitlines() if " barked " in line)
    assert barked[6:8] == ["barked", "?"]  # no roleset known
    kill, bark = read_conll12(path)
    assert [p.roleset for p in kill.predicates] == ["kill.01"]
    assert [p.sense for p in bark.predicates] == ["?"]


def test_the_frame_index_is_read_once_and_only_for_senses(monkeypatch):
    frame_meanings._shipped_lookup.cache_clear()
    _bark()
    assert frame_meanings._shipped_lookup.cache_info().currsize == 0  # no sense, no index read
    _bark(("bark.01", "model"))
    _bark(("bark.01", "model"))
    info = frame_meanings._shipped_lookup.cache_info()
    assert (info.misses, info.hits, info.currsize) == (1, 1, 1)


def test_a_frame_index_path_that_is_no_file_is_named(tmp_path):
    import lisa_tf.labelling.predictor

    with pytest.raises(frame_meanings.FrameIndexError, match=r"^frames .*missing\.json\.gz: no such file; expected a "
                                                            r"frame index"):
        lisa_tf.labelling.predictor.load("srl", frames=tmp_path / "missing.json.gz")
