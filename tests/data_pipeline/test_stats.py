"""Corpus counts and the ``python -m lisa_tf stats`` command."""

import json
import os
import subprocess
import sys

import pytest

from data_pipeline.readers.conll05 import read_conll05
from data_pipeline.stats import corpus_stats
from tests.conftest import DATA, FIXTURES, ROOT, shared_path

MINI = FIXTURES / "readers" / "test.wsj"


def _stats(*args):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-m", "lisa_tf", "stats", *map(str, args)], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=120)
    return done


def test_counts_of_the_fixture_match_its_files():
    props = (MINI / "props" / "test.wsj.props").read_text(encoding="utf-8").split("\n")
    rows = [line.split() for line in props if line.strip()]
    stats = corpus_stats(read_conll05(MINI))
    assert stats["sentences"] == 3 and stats["tokens"] == len(rows) == 79
    assert stats["predicates"] == sum(1 for row in rows if row[0] != "-") == 8
    # Arguments: opening brackets other than V; the C-A1 of "say" belongs to its A1 (srl-eval counting).
    opens = [label for row in rows for cell in row[1:] for label in cell.split("(")[1:]]
    labels = [label.rstrip("*)") for label in opens]
    assert labels.count("C-A1") == 1
    assert stats["arguments"] == len(labels) - labels.count("V") - 1 == 22


@pytest.mark.parametrize(
    "split, expected",
    [
        # sentences / tokens / predicates from the task's figures; arguments = corr + missed of the official
        # srl-eval.pl on these gold files (DeepAtt single run: 11986 + 2091 and 1625 + 552, REFERENCE.md).
        ("test.wsj", {"sentences": 2416, "tokens": 56684, "predicates": 5267, "arguments": 14077}),
        ("test.brown", {"sentences": 426, "tokens": 7159, "predicates": 804, "arguments": 2177}),
    ],
)
def test_stats_command_on_the_public_test_sets(split, expected):
    path = shared_path("conll05st", "conll05st-release", split)
    done = _stats("--format", "conll05", path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().split("\n")
    assert len(lines) == 1 and json.loads(lines[0]) == expected


def test_stats_command_other_formats_agree(tmp_path):
    from data_pipeline.readers.conll12 import read_conll12
    from data_pipeline.readers.lisa_columns import write_lisa

    ewt = DATA / "propbank-ewt" / "dev.gold_conll.gz"
    conll12 = json.loads(_stats("--format", "conll12", ewt).stdout)
    conllu = json.loads(_stats("--format", "conllu", DATA / "propbank-ewt" / "dev.conllu.gz").stdout)
    # The shipped corpus is token-aligned: same sentences and tokens; CoNLL-U has no predicates.
    assert (conllu["sentences"], conllu["tokens"]) == (conll12["sentences"], conll12["tokens"])
    assert conllu["predicates"] == conllu["arguments"] == 0 and conll12["predicates"] > 0
    lisa = tmp_path / "dev.lisa"
    write_lisa(read_conll12(ewt), lisa)
    assert json.loads(_stats("--format", "lisa", lisa).stdout) == conll12


def test_stats_command_reports_bad_input_in_one_line(tmp_path):
    split = tmp_path / "devel"
    (split / "props").mkdir(parents=True)
    (split / "props" / "devel.24.props").write_text("-  *\n", encoding="utf-8")
    done = _stats("--format", "conll05", split)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith(f"error: {split / 'words'}: expected a words/ layer") and "Penn Treebank" in done.stderr


def test_stats_command_on_an_empty_file_is_an_error(tmp_path):
    # A corpus without a sentence is an error here as for training and evaluation (it printed zero counts).
    empty = tmp_path / "dev.conllu"
    empty.write_text("\n\n", encoding="utf-8")
    done = _stats("--format", "conllu", empty)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith(f"error: {empty}: no sentences found; expected conllu data: word lines of 10 "
                                  "tab-separated CoNLL-U columns") and len(done.stderr.strip().split("\n")) == 1
