"""CoNLL-2012 reader on the AllenNLP .gold_conll fixtures and the real propbank-release EWT skeletons."""

import gzip

import pytest

from data_pipeline.errors import DataFormatError
from data_pipeline.readers.conll12 import gold_conll_lines, read_conll12
from data_pipeline.sentence import Span
from tests.conftest import shared_path

FIXTURES = "allennlp-conll2012-fixtures"


def _rows(path):
    """Token rows of a column file, found without the reader: non-blank lines not starting with '#'."""
    with open(path, encoding="utf-8") as handle:
        return [line.split() for line in handle if line.strip() and not line.startswith("#")]


def test_gold_conll_fixture_predicates_lemmas_and_spans():
    path = shared_path(FIXTURES, "srl", "subdomain", "example.gold_conll")
    sentences = read_conll12(path)
    assert [s.doc_id for s in sentences] == [f"test/test/0{i}/test_00{i}" for i in (1, 2, 3, 4)]
    first = sentences[0]
    assert first.words[:4] == ["Mali", "government", "officials", "say"]
    assert first.pos[:4] == ["NNP", "NN", "NNS", "VBP"]
    assert first.parse_bits[0] == "(TOP(S(NP(NML*" and first.parse_bits[-1] == "*))"
    assert first.line == 2 and first.source == str(path)
    # "officials" has lemma "official" but frameset "-": a sense-tagged noun, not a predicate.
    assert [(p.position, p.lemma, p.sense) for p in first.predicates] == [(3, "say", "01"), (8, "be", "01")]
    say, be = first.predicates
    assert say.arguments == (Span(0, 2, "ARG0"), Span(3, 3, "V"), Span(4, 9, "ARG1"))
    assert be.arguments == (Span(4, 7, "ARG1"), Span(8, 8, "V"), Span(9, 9, "ARG2"))
    # A nominal predicate ("hearings", frameset 01) gets the second column of sentence 2.
    second = sentences[1]
    assert [(p.position, p.lemma) for p in second.predicates] == [(2, "rest"), (11, "hearing")]
    assert second.predicates[1].arguments == (Span(11, 11, "V"),)
    # Sentence 3 has no predicate column at all (12 columns) and non-contiguous word numbers.
    assert len(sentences[2]) == 5 and sentences[2].predicates == []


def test_directory_is_read_recursively_in_sorted_order():
    root = shared_path(FIXTURES, "srl")
    sentences = read_conll12(root)
    assert [s.source.split("/")[-2] for s in sentences] == ["subdomain"] * 4 + ["subdomain2"]
    assert sum(len(s) for s in sentences) == len(_rows(root / "subdomain" / "example.gold_conll")) + len(
        _rows(root / "subdomain2" / "example.gold_conll")
    )


def test_end_document_right_after_a_token_line_and_several_parts():
    path = shared_path(FIXTURES, "coref", "coref.gold_conll")
    rows = _rows(path)
    sentences = read_conll12(path)
    assert len(sentences) == sum(1 for row in rows if row[2] == "0")
    assert sum(len(s) for s in sentences) == len(rows)
    # Each predicate row (lemma and frameset set) owns one bracket column whose V span is on that row.
    predicate_rows = sum(1 for row in rows if row[6] != "-" and row[7] != "-")
    assert sum(len(s.predicates) for s in sentences) == predicate_rows
    for sentence in sentences:
        for predicate in sentence.predicates:
            assert Span(predicate.position, predicate.position, "V") in predicate.arguments


def test_real_ewt_skeletons_match_the_published_counts():
    root = shared_path("propbank-release", "data", "google", "ewt")
    sentences = read_conll12(root)
    # Counts stated in propbank-release/SOURCE.md: 16,579 sentences, 254,564 tokens, 50,262 predicates.
    assert len(sentences) == 16579
    assert sum(len(s) for s in sentences) == 254564
    assert sum(len(s.predicates) for s in sentences) == 50262
    assert {w for s in sentences for w in s.words} == {"[WORD]"}
    assert len({s.doc_id for s in sentences}) == 1145
    for sentence in sentences:
        for predicate in sentence.predicates:
            # The predicate row lies in its column's V (or, for split verbs, C-V) span; the sense is a roleset id.
            verbs = [a for a in predicate.arguments if a.label in ("V", "C-V")]
            assert any(a.start <= predicate.position <= a.end for a in verbs), sentence.where()
            assert "." in predicate.sense


def test_skeleton_file_by_name_and_gzip():
    path = shared_path("propbank-release", "data", "google", "ewt", "reviews", "00", "001325.xml.gold_skel.gz")
    sentences = read_conll12(path)
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        rows = [line.split() for line in handle if line.strip()]
    assert sum(len(s) for s in sentences) == len(rows)
    love = sentences[1].predicates[0]
    assert (love.position, love.lemma, love.sense) == (5, "love", "love.01")
    assert love.arguments == (Span(0, 4, "ARG0"), Span(5, 5, "V"), Span(6, 7, "ARG1"))
    assert sentences[2].predicates == [] and len(sentences[2]) == 6


def test_written_gold_conll_reads_back_identically(tmp_path):
    sentences = read_conll12(shared_path(FIXTURES, "coref", "coref.gold_conll"))
    out = tmp_path / "copy.gold_conll"
    out.write_text("\n".join(gold_conll_lines("bc/cctv/00/cctv_0000", sentences)) + "\n", encoding="utf-8")
    again = read_conll12(out)
    assert len(again) == len(sentences)
    for a, b in zip(sentences, again):
        assert (a.words, a.pos, a.parse_bits, a.predicates) == (b.words, b.pos, b.parse_bits, b.predicates)


SKEL_OK = [
    "d 0 0 [WORD] PRP (TOP(S(NP*) - - (ARG0*)",
    "d 0 1 [WORD] VBZ (VP* love love.01 (V*)",
    "d 0 2 [WORD] . *)) - - *",
]


@pytest.mark.parametrize(
    "name, lines, line, fragment",
    [
        ("a.gold_skel", SKEL_OK[:1] + ["d 0 1 [WORD] VBZ (VP* love love.01"] + SKEL_OK[2:], 2, "columns"),
        ("a.gold_skel", [SKEL_OK[0], "d 0 1 [WORD] VBZ (VP* - - (V*)", SKEL_OK[2]], 1, "1 bracket columns"),
        ("a.gold_skel", [SKEL_OK[0].replace("(ARG0*)", "(ARG0*"), *SKEL_OK[1:]], 1, "unbalanced"),
        ("a.gold_skel", [*SKEL_OK[:2], SKEL_OK[2].replace(" *", " (V*)")], 3, "a second (V*) in the predicate's column"),
        ("a.gold_skel", ["d 0 0 [WORD] PRP (TOP*"], 1, "at least 8 columns"),
        ("a.gold_skel", [SKEL_OK[0], SKEL_OK[1].replace("d ", "e ", 1), SKEL_OK[2]], 2, "doc id"),
        ("a.gold_conll", SKEL_OK, 1, "at least 12 columns"),
        ("a.gold_conll", ["#begin nothing"] + SKEL_OK, 1, "#begin document"),
    ],
)
def test_malformed_files_raise_with_file_and_line(tmp_path, name, lines, line, fragment):
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(DataFormatError) as caught:
        read_conll12(path)
    assert caught.value.path == str(path) and caught.value.line == line
    assert fragment in caught.value.message


def test_format_comes_from_the_file_name_and_bytes_must_be_utf8(tmp_path):
    wrong_name = tmp_path / "a.txt"
    wrong_name.write_text("\n".join(SKEL_OK) + "\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match="gold_conll or"):
        read_conll12(wrong_name)
    with pytest.raises(DataFormatError, match="found none"):
        read_conll12(tmp_path)
    latin = tmp_path / "b.gold_skel"
    latin.write_bytes(("\n".join(SKEL_OK) + "\n").replace("[WORD]", "caf\xe9", 1).encode("latin-1"))
    with pytest.raises(DataFormatError) as caught:
        read_conll12(latin)
    assert caught.value.line == 1
    good = tmp_path / "c.gold_skel"
    good.write_text("\n".join(SKEL_OK) + "\n", encoding="utf-8")
    assert [p.sense for p in read_conll12(good)[0].predicates] == ["love.01"]
