"""CoNLL-U reader on real UD English-EWT files, and attaching trees to SRL sentences."""

import gzip
import re

import pytest

from data_pipeline.errors import DataFormatError
from data_pipeline.readers.conll12 import read_conll12
from data_pipeline.readers.conllu import ConlluCounts, attach_parse, read_conllu
from tests.conftest import DATA, shared_path

SOURCES = ("ud-english-ewt", "not-to-release", "sources")


def test_reads_the_documented_review_sentence():
    path = shared_path(*SOURCES, "reviews", "001325.xml.conllu.gz")
    sentences = read_conllu(path)
    # Sentence 2 as printed in ud-english-ewt/SOURCE.md.
    second = sentences[1]
    assert second.words == "My 8 year old daughter loves this place .".split()
    assert second.pos == ["PRP$", "CD", "NN", "JJ", "NN", "VBZ", "DT", "NN", "."]  # XPOS, not UPOS
    assert second.heads == [5, 3, 4, 5, 6, 0, 8, 6, 6]
    assert second.dep_labels == ["nmod:poss", "nummod", "obl:unmarked", "amod", "nsubj", "root", "det", "obj", "punct"]
    assert second.predicates == [] and second.source == str(path)


def test_ranges_and_empty_nodes_are_skipped_and_counted():
    path = shared_path(*SOURCES, "answers", "20111108072305AAPJTjj_ans.xml.conllu.gz")
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        ids = [line.split("\t")[0] for line in handle if line.strip() and not line.startswith("#")]
    counts = ConlluCounts()
    sentences = read_conllu(path, counts)
    ranges = sum(1 for i in ids if re.fullmatch(r"\d+-\d+", i))
    empty = sum(1 for i in ids if re.fullmatch(r"\d+\.\d+", i))
    assert empty > 0 and ranges > 0
    assert (counts.ranges, counts.empty_nodes) == (ranges, empty)
    assert counts.tokens == sum(len(s) for s in sentences) == len(ids) - ranges - empty
    for sentence in sentences:
        assert sentence.heads.count(0) >= 1 and all(0 <= h <= len(sentence) for h in sentence.heads)


GOOD = ["1\tHi\thi\tINTJ\tUH\t_\t0\troot\t0:root\t_", "2\t!\t!\tPUNCT\t.\t_\t1\tpunct\t1:punct\t_"]


@pytest.mark.parametrize(
    "lines, line, fragment",
    [
        (["# c", GOOD[0], "2\t!\t!\tPUNCT\t.\t_\t1\tpunct\t1:punct"], 3, "10 tab-separated"),
        (["# c", GOOD[0], GOOD[1].replace("\t1\tpunct", "\t7\tpunct")], 3, "HEAD between 0 and 2"),
        (["# c", GOOD[0], GOOD[1].replace("2\t", "3\t", 1)], 3, "word id 2"),
        (["# c", "1-2\tHi!\t_\t_\t_\t_\t_\t_\t_\t_"], 2, "at least one word"),
        (["# c", GOOD[0], GOOD[1].replace("1\tpunct", "x\tpunct")], 3, "HEAD"),
    ],
)
def test_malformed_conllu_raises_with_line(tmp_path, lines, line, fragment):
    path = tmp_path / "bad.conllu"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(DataFormatError) as caught:
        read_conllu(path)
    assert caught.value.line == line and fragment in caught.value.message


def test_missing_xpos_falls_back_to_upos(tmp_path):
    path = tmp_path / "upos.conllu"
    path.write_text("\n".join(g.replace("\tUH\t", "\t_\t").replace("\t.\t_", "\t_\t_") for g in GOOD) + "\n")
    counts = ConlluCounts()
    assert read_conllu(path, counts)[0].pos == ["INTJ", "PUNCT"] and counts.upos_fallback == 1


def test_attach_parse_on_the_shipped_corpus_and_mismatches():
    srl = read_conll12(DATA / "propbank-ewt" / "test.gold_conll.gz")
    conllu_path = DATA / "propbank-ewt" / "test.conllu.gz"
    trees = read_conllu(conllu_path)
    joined = attach_parse(srl, trees, conllu_path)
    assert [s.words for s in joined] == [s.words for s in srl]
    assert [s.heads for s in joined] == [t.heads for t in trees]
    assert all(s.heads is None for s in srl)  # the inputs are not modified
    with pytest.raises(DataFormatError, match="one parse per SRL sentence"):
        attach_parse(srl, trees[1:], conllu_path)
    # Shift the parses by one sentence: the first pair whose lengths differ is reported, never misaligned.
    shifted = trees[1:] + trees[:1]
    first_bad = next(i for i, (s, t) in enumerate(zip(srl, shifted)) if len(s) != len(t))
    with pytest.raises(DataFormatError) as caught:
        attach_parse(srl, shifted, conllu_path)
    assert caught.value.line == shifted[first_bad].line
    assert f"sentence {first_bad + 1}:" in caught.value.message and srl[first_bad].where() in caught.value.message
