"""Tests of data_pipeline.word_forms: regular inflection corrected by the shipped table, the table's
invariants, bad files, and (where LemmInflect is installed) the build."""

from __future__ import annotations

import json

import pytest

from data_pipeline.errors import DataFormatError
from data_pipeline.word_forms import FORMAT, WordForms, build, regular_inflections, shipped_word_forms


@pytest.mark.parametrize("word, forms", [
    ("lend", {"lends", "lent", "lending"}), ("rise", {"rises", "rose", "risen", "rising"}),
    ("go", {"goes", "went", "gone", "going"}), ("be", {"is", "are", "was", "were", "been", "being"}),
    ("analysis", {"analyses"}), ("good", {"better", "best"}), ("bark", {"barks", "barked", "barking"}),
])
def test_inflections_with_the_shipped_table(word, forms):
    assert forms <= shipped_word_forms().inflections(word)


@pytest.mark.parametrize("word, other", [("form", "former"), ("compute", "computer"), ("let", "letter")])
def test_regular_looking_forms_of_other_words_are_not_inflections(word, other):
    assert other in regular_inflections(word)
    assert other not in shipped_word_forms().inflections(word)


def test_the_shipped_table_corrects_only_what_the_rules_get_wrong():
    table = shipped_word_forms()
    for lemma, forms in table.irregular.items():
        assert forms and not forms & regular_inflections(lemma), lemma
    for lemma, forms in table.not_inflections.items():
        assert forms and forms <= regular_inflections(lemma) - {lemma}, lemma


def test_save_and_load_round_trip(tmp_path):
    table = WordForms({"lend": frozenset({"lent"})}, {"form": frozenset({"former"})}, {"resource": "test"})
    table.save(tmp_path / "forms.json")
    assert WordForms.load(tmp_path / "forms.json") == table


@pytest.mark.parametrize("text, message", [
    ("not json", "expected a word-form table"),
    (json.dumps({"format": "other/1"}), "expected format 'lisa_tf.word_forms/1', found 'other/1'"),
    (json.dumps({"format": FORMAT, "irregular": {"lend": "lent"}, "not_inflections": {}}), "irregular: expected"),
    (json.dumps({"format": FORMAT, "irregular": {}, "not_inflections": []}), "not_inflections: expected"),
])
def test_a_bad_table_is_one_clear_error(tmp_path, text, message):
    path = tmp_path / "forms.json"
    path.write_text(text)
    with pytest.raises(DataFormatError, match="forms.json") as error:
        WordForms.load(path)
    assert message in str(error.value) and "\n" not in str(error.value)


def test_build_from_lemminflect():
    pytest.importorskip("lemminflect")
    table = build({"lend", "form", "rise"})
    assert table.irregular["lend"] == {"lent"} and {"rose", "risen"} <= table.irregular["rise"]
    assert "former" in table.not_inflections["form"] and "formed" in table.inflections("form")
