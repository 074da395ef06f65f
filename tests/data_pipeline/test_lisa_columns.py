"""LISA combined format: round trip of real CoNLL-2005 sentences with converted heads, and malformed files."""

import dataclasses

import pytest

from data_pipeline.errors import DataFormatError
from data_pipeline.head_rules import sentence_heads
from data_pipeline.readers import read_sentences
from data_pipeline.readers.conll05 import read_conll05
from data_pipeline.readers.lisa_columns import read_lisa, write_lisa
from data_pipeline.spans import overlapping_spans
from tests.conftest import FIXTURES, shared_path

MINI = FIXTURES / "readers" / "test.wsj"


def _with_heads(sentences):
    result = []
    for sentence in sentences:
        heads, labels = sentence_heads(sentence)
        result.append(dataclasses.replace(sentence, heads=heads, dep_labels=labels, doc_id="conll05"))
    return result


def _same(read, written):
    assert len(read) == len(written)
    for a, b in zip(read, written):
        assert (a.words, a.pos, a.heads, a.dep_labels, a.doc_id) == (b.words, b.pos, b.heads, b.dep_labels, b.doc_id)
        assert [(p.position, p.lemma, p.sense, p.arguments) for p in a.predicates] == [
            (p.position, p.lemma, p.sense, p.arguments) for p in b.predicates
        ]


def test_written_columns_follow_the_layout(tmp_path):
    sentences = _with_heads(read_conll05(MINI))
    path = tmp_path / "mini.lisa"
    assert write_lisa(sentences, path) == 3
    blocks = [b for b in path.read_text(encoding="utf-8").split("\n\n") if b.strip()]
    rows = [line.split("\t") for line in blocks[1].split("\n")]
    # Sentence 2 has 4 predicates: 14 fixed columns + 4 SRL columns.
    assert {len(row) for row in rows} == {18}
    fall = rows[9]
    assert fall[:4] == ["conll05", "1", "9", "fall"] and fall[10] == "fall"
    # fall's own V; inside "manage"'s AM-ADV ("while ... --", opened on line 11 of the props file).
    assert fall[14:] == ["B-V", "O", "I-AM-ADV", "O"]
    assert [row[14] for row in rows[2:7]] == ["B-A1"] + ["I-A1"] * 4  # "the New York Stock Exchange"
    assert [row[10] for row in rows].count("-") == len(rows) - 4


def test_round_trip_of_the_fixture_sentences(tmp_path):
    sentences = _with_heads(read_conll05(MINI))
    path = tmp_path / "mini.lisa.gz"
    write_lisa(sentences, path)
    _same(read_lisa(path), sentences)
    _same(read_sentences(path, "lisa"), sentences)


@pytest.mark.parametrize("split", ["test.wsj", "test.brown"])
def test_round_trip_of_the_public_test_sets(split, tmp_path):
    sentences = _with_heads(read_conll05(shared_path("conll05st", "conll05st-release", split)))
    # BIO can express these props: no predicate of the test sets has nested arguments.
    assert not any(overlapping_spans(p.arguments) for s in sentences for p in s.predicates)
    path = tmp_path / f"{split}.lisa"
    write_lisa(sentences, path)
    _same(read_lisa(path), sentences)


def test_missing_heads_are_written_and_read_as_none(tmp_path):
    sentences = read_conll05(MINI)
    path = tmp_path / "noheads.lisa"
    write_lisa(sentences, path, domain="wsj")
    read = read_lisa(path)
    assert all(s.heads is None and s.dep_labels is None and s.doc_id == "wsj" for s in read)
    assert [s.predicates for s in read] == [s.predicates for s in sentences]


def _lines(tmp_path):
    path = tmp_path / "mini.lisa"
    write_lisa(_with_heads(read_conll05(MINI)), path)
    return path, path.read_text(encoding="utf-8").split("\n")


def _rewrite(path, lines, number, edit):
    cells = lines[number - 1].split("\t")
    edit(cells)
    lines[number - 1] = "\t".join(cells)
    path.write_text("\n".join(lines), encoding="utf-8")


@pytest.mark.parametrize(
    "number, edit, line, fragment",
    [
        # Line 19 is "fall" (sentence 2 starts on line 10): removing its lemma leaves 3 predicates for 4 columns.
        (19, lambda c: c.__setitem__(10, "-"), 10, "3 predicates but 4 SRL columns"),
        (12, lambda c: c.pop(), 12, "expected 18 tab-separated columns"),
        (13, lambda c: c.__setitem__(2, "7"), 13, "token id 3"),
        (13, lambda c: c.__setitem__(6, "41"), 13, "head between 0 and 40"),
        (14, lambda c: c.__setitem__(14, "X-A1"), 14, "not O, B-X or I-X"),
    ],
)
def test_malformed_lines(tmp_path, number, edit, line, fragment):
    path, lines = _lines(tmp_path)
    assert lines[18].split("\t")[3] == "fall"
    _rewrite(path, lines, number, edit)
    with pytest.raises(DataFormatError, match=fragment) as info:
        read_lisa(path)
    assert (info.value.path, info.value.line) == (str(path), line)


def test_too_few_columns_and_non_utf8(tmp_path):
    path, lines = _lines(tmp_path)
    first = [line.split("\t")[:13] for line in lines[:8]]
    short = tmp_path / "short.lisa"
    short.write_text("\n".join("\t".join(cells) for cells in first) + "\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match="at least 14") as info:
        read_lisa(short)
    assert info.value.line == 1
    raw = path.read_bytes().split(b"\n")
    raw[4] = raw[4].replace(b"n't", b"n\xe2t")
    path.write_bytes(b"\n".join(raw))
    with pytest.raises(DataFormatError, match="UTF-8") as info:
        read_lisa(path)
    assert info.value.line == 5
