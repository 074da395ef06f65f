"""The CoNLL-2005 labels mapped to unified PropBank's (benchmarks/newswire_conll05.py), on the real test sets."""

from __future__ import annotations

import pytest

from benchmarks.newswire_conll05 import CONLL05, covering_own_predicate, unified, unified_label


def test_the_mapping_names_each_label_as_unified_propbank_does():
    assert [unified_label(x) for x in ("A0", "R-A1", "C-A2", "AA", "AM-TMP", "AM-PNC", "R-AM-LOC", "V")] == [
        "ARG0", "R-ARG1", "C-ARG2", "ARGA", "ARGM-TMP", "ARGM-PRP", "R-ARGM-LOC", "V"]


@pytest.mark.skipif(not (CONLL05 / "test.wsj" / "words").is_dir(), reason="needs ../shared/data/conll05st (the "
                    "CoNLL-2005 test sets with words), beside the repository")
def test_every_conll05_test_label_becomes_one_the_ewt_training_data_has():
    from data_pipeline.readers.conll05 import read_conll05
    from data_pipeline.readers.conll12 import read_conll12
    from tests.conftest import ROOT

    ewt = {a.label for s in read_conll12(ROOT / "data" / "propbank-ewt" / "train.gold_conll.gz")
           for p in s.predicates for a in p.arguments}
    gold = [s for split in ("test.wsj", "test.brown") for s in unified(read_conll05(CONLL05 / split))]
    labels = {a.label for s in gold for p in s.predicates for a in p.arguments}
    assert labels - ewt == {"R-ARGM-EXT"}  # the one CoNLL-2005 test label EWT's training data never has
    assert covering_own_predicate(gold) == 0  # gold arguments never cover their verb
