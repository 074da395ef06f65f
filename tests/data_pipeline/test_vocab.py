"""Vocabularies built from real CoNLL-2005 / PropBank-EWT sentences."""

import collections
import dataclasses

import pytest

from data_pipeline.errors import DataFormatError
from data_pipeline.spans import brackets_to_spans
from data_pipeline.vocab import (
    OOV,
    OOV_ID,
    PAD,
    PAD_ID,
    UnknownLabelError,
    Vocabularies,
    Vocabulary,
    predicate_bio_tags,
)
from tests.conftest import DATA, shared_path


@pytest.fixture(scope="module")
def wsj():
    from data_pipeline.readers.conll05 import read_conll05

    return read_conll05(shared_path("conll05st", "conll05st-release", "test.wsj"))


@pytest.fixture(scope="module")
def vocabs(wsj):
    return Vocabularies.build(wsj)


def test_word_vocabulary_is_lower_cased_with_padding_and_oov_first(wsj, vocabs):
    assert vocabs.words.entries[PAD_ID] == PAD == "" and vocabs.words.entries[OOV_ID] == OOV
    distinct = {w.lower() for s in wsj for w in s.words}
    assert len(vocabs.words) == 2 + len(distinct)
    assert vocabs.word_id("The") == vocabs.word_id("the") != OOV_ID
    assert all(vocabs.word_id(w) != OOV_ID for s in wsj for w in s.words)
    assert vocabs.word_id("qwzxv-not-a-word") == OOV_ID
    # Most frequent word first after the reserved entries.
    counts = collections.Counter(w.lower() for s in wsj for w in s.words)
    assert vocabs.words.entries[2] == counts.most_common(1)[0][0]


def test_min_count_sends_rare_words_to_oov(wsj):
    counts = collections.Counter(w.lower() for s in wsj for w in s.words)
    vocabs = Vocabularies.build(wsj, min_count=2)
    singletons = [w for w, c in counts.items() if c == 1]
    assert singletons and all(vocabs.words.lookup(w) == OOV_ID for w in singletons)
    assert len(vocabs.words) == 2 + sum(1 for c in counts.values() if c >= 2)
    assert vocabs.info["words_below_min_count"] == len(singletons)


def test_srl_labels_are_the_bio_tags_of_the_spans(wsj, vocabs):
    expected = {"O"}
    for sentence in wsj:
        for predicate in sentence.predicates:
            for span in predicate.arguments:
                expected.add(f"B-{span.label}")
                if span.end > span.start:
                    expected.add(f"I-{span.label}")
    assert vocabs.srl.entries[0] == "O"
    assert set(vocabs.srl.entries) == expected
    assert {"B-V", "B-A0", "I-A1", "B-AM-TMP", "B-R-A0", "B-C-A1"} <= expected
    # test.wsj has no nested arguments (checked pairwise here), so nothing was dropped.
    for sentence in wsj:
        for predicate in sentence.predicates:
            spans = predicate.arguments
            assert not any(a.start <= b.end and b.start <= a.end for i, a in enumerate(spans) for b in spans[i + 1 :])
    assert vocabs.info["bio"]["nested_spans"] == 0
    assert vocabs.info["bio"]["predicates"] == sum(len(s.predicates) for s in wsj)


def test_joint_pos_predicate_labels_follow_lisa(wsj, vocabs):
    pos = {t for s in wsj for t in s.pos}
    on_predicates = {s.pos[p.position] for s in wsj for p in s.predicates}
    assert set(vocabs.pos.entries) == pos
    assert set(vocabs.joint_pos_predicate.entries) == pos | {f"{t}:PREDICATE" for t in on_predicates}
    assert "VBD" in vocabs.joint_pos_predicate and "VBD:PREDICATE" in vocabs.joint_pos_predicate
    assert "DT:PREDICATE" not in vocabs.joint_pos_predicate


def test_nested_spans_are_counted_not_lost(wsj):
    # A real sentence whose first predicate gets an extra argument nested inside another one.
    sentence = next(s for s in wsj if s.predicates and any(a.end > a.start + 1 for a in s.predicates[0].arguments))
    outer = next(a for a in sentence.predicates[0].arguments if a.end > a.start + 1)
    column = ["*"] * len(sentence)
    for span in sentence.predicates[0].arguments:
        column[span.start] = f"({span.label}" + column[span.start]
        column[span.end] += ")"
    column[outer.start] = column[outer.start].replace("*", "(C-A1*", 1)
    column[outer.start] += ")"
    nested = brackets_to_spans(column)
    assert len(nested) == len(sentence.predicates[0].arguments) + 1
    predicate = dataclasses.replace(sentence.predicates[0], arguments=tuple(nested))
    tags, dropped = predicate_bio_tags(predicate, len(sentence))
    assert len(dropped) == 1 and dropped[0].label == "C-A1"
    assert "B-C-A1" not in tags and tags[outer.start] == f"B-{outer.label}"
    modified = dataclasses.replace(sentence, predicates=[predicate])
    vocabs = Vocabularies.build([modified])
    assert vocabs.info["bio"]["nested_spans"] == 1
    assert sentence.where() in vocabs.info["bio"]["examples"][0]


def test_save_and_load_round_trip(vocabs, tmp_path):
    vocabs.save(tmp_path / "vocab")
    # One entry per line; the word file starts with the empty padding entry.
    lines = (tmp_path / "vocab" / "words.txt").read_text(encoding="utf-8").split("\n")
    assert lines[:2] == ["", OOV] and lines[-1] == "" and lines[:-1] == vocabs.words.entries
    assert (tmp_path / "vocab" / "srl.txt").read_text(encoding="utf-8").splitlines() == vocabs.srl.entries
    loaded = Vocabularies.load(tmp_path / "vocab")
    for name in ("words", "srl", "pos", "joint_pos_predicate", "dep_labels"):
        assert getattr(loaded, name) == getattr(vocabs, name)
    assert loaded.info == vocabs.info
    assert loaded.word_id("Qwzxv") == OOV_ID


def test_unknown_labels_raise_clear_errors(vocabs):
    with pytest.raises(UnknownLabelError) as info:
        vocabs.srl.lookup("B-ARG0")  # PropBank-EWT naming, not CoNLL-2005's
    assert "'B-ARG0'" in str(info.value) and "'srl'" in str(info.value)
    with pytest.raises(UnknownLabelError, match="'pos'"):
        vocabs.pos.lookup("PROPN")
    with pytest.raises(IndexError, match="'srl'"):
        vocabs.srl.entry(len(vocabs.srl))


def test_loading_rejects_malformed_files(vocabs, tmp_path):
    vocabs.save(tmp_path)
    (tmp_path / "pos.txt").write_text("NN\nVB\nNN\n", encoding="utf-8")
    with pytest.raises(DataFormatError) as info:
        Vocabularies.load(tmp_path)
    assert info.value.line == 3 and "line 1" in info.value.message
    vocabs.save(tmp_path)
    (tmp_path / "words.txt").write_text("the\n<unk>\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match="padding entry"):
        Vocabularies.load(tmp_path)
    (tmp_path / "words.txt").unlink()
    with pytest.raises(DataFormatError, match="cannot read"):
        Vocabularies.load(tmp_path)
    with pytest.raises(ValueError, match="twice"):
        Vocabulary("x", ["a", "a"])


def test_dependency_labels_from_ud_trees():
    from data_pipeline.readers.conll12 import read_conll12
    from data_pipeline.readers.conllu import attach_parse, read_conllu

    parse_path = DATA / "propbank-ewt" / "dev.conllu.gz"
    sentences = attach_parse(read_conll12(DATA / "propbank-ewt" / "dev.gold_conll.gz"), read_conllu(parse_path), parse_path)
    vocabs = Vocabularies.build(sentences)
    assert set(vocabs.dep_labels.entries) == {label for s in sentences for label in s.dep_labels}
    assert {"nsubj", "obj", "root", "punct"} <= set(vocabs.dep_labels.entries)
    assert vocabs.srl.entries[0] == "O" and "B-ARG0" in vocabs.srl


def test_the_longest_sentence_and_token_are_recorded_and_kept_when_extended():
    """The server's default limits come from these (data_pipeline/input_limits.py): EWT's longest
    training token is a 140-character URL."""
    from data_pipeline.readers.conll12 import read_conll12

    train = read_conll12(DATA / "propbank-ewt" / "train.gold_conll.gz")
    built = Vocabularies.build(train)
    assert built.info["longest_sentence"] == max(len(s) for s in train) == 159
    assert built.info["longest_token"] == max(len(w) for s in train for w in s.words) == 140
    small = Vocabularies.build(train[:5])
    assert small.info["longest_token"] < 140
    assert small.extended(built).info["longest_token"] == 140 == built.extended(small).info["longest_token"]
    old = dataclasses.replace(small, info={k: v for k, v in small.info.items() if k != "longest_token"})
    assert "longest_token" not in old.extended(dataclasses.replace(old)).info  # nothing recorded: nothing made up
