"""The shipped PropBank-EWT corpus: reproducible from the sources, aligned, split as listed, counts as documented."""

import gzip
import re

import pytest

from data_pipeline import open_corpus
from data_pipeline.readers.conll12 import read_conll12
from data_pipeline.readers.conllu import read_conllu
from tests.conftest import DATA, shared_path

CORPUS = DATA / "propbank-ewt"
BUILT = [f"{split}.{kind}" for split in open_corpus.SPLITS for kind in ("gold_conll.gz", "conllu.gz")] + ["README.md"]


@pytest.fixture(scope="module")
def shipped():
    return {
        split: (read_conll12(CORPUS / f"{split}.gold_conll.gz"), read_conllu(CORPUS / f"{split}.conllu.gz"))
        for split in open_corpus.SPLITS
    }


def test_rebuild_from_sources_is_byte_identical(tmp_path):
    propbank = shared_path("propbank-release")
    ud = shared_path("ud-english-ewt")
    assert open_corpus.main(["--propbank", str(propbank), "--ud", str(ud), "--out", str(tmp_path)]) == 0
    for name in BUILT:
        rebuilt, shipped_file = tmp_path / name, CORPUS / name
        if name.endswith(".gz"):
            # Same text first (a clearer failure), then the same bytes (gzip header with mtime 0).
            assert gzip.decompress(rebuilt.read_bytes()) == gzip.decompress(shipped_file.read_bytes()), name
        assert rebuilt.read_bytes() == shipped_file.read_bytes(), name


def test_conllu_and_gold_conll_are_token_aligned(shipped):
    for split, (srl, trees) in shipped.items():
        assert len(srl) == len(trees), split
        for sentence, tree in zip(srl, trees):
            assert sentence.words == tree.words, sentence.where()
            assert len(tree.heads) == len(sentence) and tree.heads.count(0) >= 1
            assert not set(sentence.words) & {"[WORD]"}
            # POS is the skeleton's PTB tag; UD XPOS is the same tag set, so the two mostly agree.
        agree = sum(a == b for s, t in zip(srl, trees) for a, b in zip(s.pos, t.pos))
        assert agree / sum(len(s) for s in srl) > 0.98


def test_readme_counts_match_the_files(shipped):
    readme = (CORPUS / "README.md").read_text(encoding="utf-8")
    table = {}
    for match in re.finditer(r"^\| (\w+) \| ([\d,]+) \| ([\d,]+) \| ([\d,]+) \| ([\d,]+) \| ([\d,]+) \| ([\d,]+) \|", readme, re.M):
        table[match.group(1)] = [int(g.replace(",", "")) for g in match.groups()[1:]]
    skipped_rows = re.findall(r"^\| (train|dev|test) \| `", readme, re.M)
    for split, (srl, _) in shipped.items():
        docs, sentences, tokens, predicates, arguments, skipped = table[split]
        assert docs == len({s.doc_id for s in srl})
        assert sentences == len(srl)
        assert tokens == sum(len(s) for s in srl)
        assert predicates == sum(len(s.predicates) for s in srl)
        assert arguments == sum(s.num_arguments() for s in srl)
        assert skipped == skipped_rows.count(split)
    # Every one of the 16,579 EWT skeleton sentences (propbank-release/SOURCE.md) is either written or listed.
    assert sum(table[split][1] + table[split][5] for split in open_corpus.SPLITS) == 16579
    assert sum(table[split][0] for split in open_corpus.SPLITS) == 1145


def test_documents_stay_in_their_official_split(shipped):
    propbank = shared_path("propbank-release")
    doc_sets = {split: {s.doc_id for s in srl} for split, (srl, _) in shipped.items()}
    for split in open_corpus.SPLITS:
        listed = {f"google/ewt/{d.split('/')[0]}/00/{d.split('/')[1]}" for d in open_corpus.split_documents(str(propbank), split)}
        assert doc_sets[split] <= listed
    assert not (doc_sets["train"] & doc_sets["dev"] or doc_sets["train"] & doc_sets["test"] or doc_sets["dev"] & doc_sets["test"])


def test_split_lists_accept_both_spellings():
    propbank = shared_path("propbank-release")
    dev = open_corpus.split_documents(str(propbank), "dev")  # lines end in .xml.conllu
    test = open_corpus.split_documents(str(propbank), "test")  # lines end in .xml
    assert len(dev) == 318 and len(test) == 316
    assert all(d.endswith(".xml") and d.count("/") == 1 for d in dev + test)


def test_sentence_alignment_over_a_split_and_a_missing_sentence():
    # reviews/275919: the skeleton's 21-token sentence is two UD sentences (13 + 8 tokens).
    skeleton = [5, 15, 10, 14, 11, 7, 12, 25, 12, 21, 5, 13]
    ud = [5, 15, 10, 14, 11, 7, 12, 25, 12, 13, 8, 5, 13]
    pairs = dict(open_corpus.align_sentences(skeleton, ud))
    assert [pairs[i] for i in range(9)] == list(range(9))
    assert (pairs[10], pairs[11]) == (11, 12)
    assert pairs.get(9) is None or skeleton[9] != ud[pairs[9]]
    # email/enronsent26_02: the skeleton has one sentence more at the end.
    assert open_corpus.align_sentences([2, 3, 1, 2], [2, 3, 1]) == [(0, 0), (1, 1), (2, 2)]
