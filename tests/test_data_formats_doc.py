"""The examples of docs/data-formats.md are data the readers take, with the frames they describe."""

from __future__ import annotations

import re

from data_pipeline.readers.conll05 import read_conll05
from data_pipeline.readers.conll12 import read_conll12
from data_pipeline.splits import read_split
from tests.conftest import ROOT

DOC = (ROOT / "docs" / "data-formats.md").read_text(encoding="utf-8")


def _block(starting: str) -> str:
    blocks = re.findall(r"```\n(.*?)```", DOC, flags=re.S)
    [block] = [b for b in blocks if b.startswith(starting)]
    return block


def test_the_conll12_example_reads_as_the_frame_it_shows(tmp_path):
    path = tmp_path / "example.gold_conll"
    path.write_text(_block("#begin document"))
    [sentence] = read_conll12(path)
    assert sentence.words == ["American", "forces", "killed", "Shaikh"]
    [predicate] = sentence.predicates
    assert (predicate.position, predicate.lemma) == (2, "kill")
    assert sorted((a.start, a.end, a.label) for a in predicate.arguments) == [(0, 1, "ARG0"), (2, 2, "V"), (3, 3, "ARG1")]
    [converted] = read_split(str(path), "conll12")  # its tree column gives LISA a dependency tree
    assert converted.heads is not None and converted.heads.count(0) == 1


def test_the_conll05_example_reads_as_the_frame_it_shows(tmp_path):
    path = tmp_path / "example.props"
    path.write_text(_block("The "))
    [sentence] = read_conll05(path)
    assert sentence.words == ["The", "cat", "sat", "."]
    [predicate] = sentence.predicates
    assert sorted((a.start, a.end, a.label) for a in predicate.arguments) == [(0, 1, "ARG1"), (2, 2, "V")]

