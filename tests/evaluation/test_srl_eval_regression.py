"""The scorer against the official ``srl-eval.pl`` on DeepAtt's released CoNLL-2005 outputs.

The expected numbers are the official script's output (REFERENCE.md table, also the DeepAtt paper's
Table 1), so they are hard-coded. The files ship in ``tests/fixtures`` so this runs on any clone.
"""

from __future__ import annotations

import pathlib

import pytest

from data_pipeline.column_file import read_blocks
from data_pipeline.sentence import Predicate, Sentence
from data_pipeline.spans import brackets_to_spans
from lisa_tf.evaluation import srl_eval
from lisa_tf_cli.main import main

from tests.conftest import FIXTURES, shared_path

GOLD = {"dev": "devel.24.props.gz", "wsj": "test.wsj.props.gz", "brown": "test.brown.props.gz"}

# system, split, sentences, props, perfect %, corr, excess, missed, P, R, F1 (official srl-eval.pl)
OFFICIAL = [
    ("single", "dev", 1346, 3248, "65.21", 6975, 1469, 1371, "82.60", "83.57", "83.09"),
    ("single", "wsj", 2416, 5267, "67.10", 11986, 2207, 2091, "84.45", "85.15", "84.80"),
    ("single", "brown", 426, 804, "48.38", 1625, 585, 552, "73.53", "74.64", "74.08"),
    ("ensemble", "dev", 1346, 3248, "67.27", 7083, 1316, 1263, "84.33", "84.87", "84.60"),
    ("ensemble", "wsj", 2416, 5267, "68.96", 12142, 1998, 1935, "85.87", "86.25", "86.06"),
    ("ensemble", "brown", 426, 804, "48.63", 1632, 555, 545, "74.62", "74.97", "74.79"),
]


def paths(system: str, split: str) -> tuple[pathlib.Path, pathlib.Path]:
    return FIXTURES / "conll05" / GOLD[split], FIXTURES / "deepatt" / system / f"conll05.{split}.result.gz"


@pytest.mark.parametrize("system, split, sentences, props, perfect, corr, excess, missed, p, r, f1", OFFICIAL)
def test_official_numbers_are_reproduced(system, split, sentences, props, perfect, corr, excess, missed, p, r, f1):
    gold, predicted = paths(system, split)
    warnings = []
    result = srl_eval.evaluate(gold, predicted, warn=warnings.append)
    assert (result.sentences, result.propositions) == (sentences, props)
    assert (result.overall.correct, result.overall.excess, result.overall.missed) == (corr, excess, missed)
    assert f"{result.perfect_percentage:.2f}" == perfect
    assert (f"{result.precision:.2f}", f"{result.recall:.2f}", f"{result.f1:.2f}") == (p, r, f1)
    # Every gold prop has its predicted prop with the same verb: nothing to warn about or skip.
    assert warnings == [] and result.skipped_predicted_props == result.missing_predicted_props == 0
    # Per-type counts add up to the overall line; V is reported apart and holds one V per proposition.
    assert sum(c.correct for c in result.per_type.values()) == corr
    assert sum(c.excess for c in result.per_type.values()) == excess
    assert sum(c.missed for c in result.per_type.values()) == missed
    assert set(result.excluded) == {"V"}
    assert result.excluded["V"].correct + result.excluded["V"].missed == props
    assert not any(name.startswith("C-") for name in result.per_type)

    lines = result.report().splitlines()
    assert lines[0] == f"Number of Sentences    :      {sentences:6d}"
    assert lines[1] == f"Number of Propositions :      {props:6d}"
    assert lines[2] == f"Percentage of perfect props : {perfect:>6}"
    assert lines[6] == f"   Overall   {corr:6d}  {excess:6d}  {missed:6d}   {p:>6}  {r:>6}  {f1:>6}"


def test_report_layout_matches_the_script():
    gold, predicted = paths("single", "wsj")
    result = srl_eval.evaluate(gold, predicted, warn=None)
    lines = result.report().splitlines()
    assert lines[3] == ""
    assert lines[4] == "              corr.  excess  missed    prec.    rec.      F1"
    assert lines[5] == "-" * 60 and lines[7] == "-" * 10
    type_lines = lines[8:lines.index("-" * 60, 8)]
    names = [line.split()[0] for line in type_lines]
    assert names == sorted(names) and "R-A0" in names and "A0" in names and "V" not in names
    assert all(len(line) == 60 for line in type_lines)
    # Each type line is the script's printf layout: name right-aligned in 10, counts in 6, scores %6.2f.
    for line in type_lines:
        name, corr, excess, missed, p, r, f1 = line.split()
        assert line == f"{name:>10}   {int(corr):6d}  {int(excess):6d}  {int(missed):6d}   {p:>6}  {r:>6}  {f1:>6}"
        assert float(p) == pytest.approx(100 * int(corr) / max(1, int(corr) + int(excess)), abs=0.005)
    v_line = lines[lines.index("-" * 60, 8) + 1]
    assert v_line.split()[0] == "V" and lines[-1] == "-" * 60 and len(lines) == lines.index(v_line) + 2


def _sentences(path) -> list[Sentence]:
    """Props file -> Sentence objects (words unknown: the props layer has none)."""
    out = []
    for block in read_blocks(path):
        targets = [row[0] for row in block.rows]
        columns = [[row[k] for row in block.rows] for k in range(1, len(block.rows[0]))]
        predicates = []
        for position, verb in enumerate(targets):
            if verb != "-":
                spans = brackets_to_spans(columns.pop(0), block.path, block.first_line)
                predicates.append(Predicate(position, verb, arguments=tuple(spans)))
        out.append(Sentence(words=["_"] * len(block.rows), predicates=predicates, source=block.path,
                            line=block.first_line))
    return out


def test_in_memory_sentences_score_like_the_files():
    gold, predicted = paths("single", "brown")
    from_files = srl_eval.evaluate(gold, predicted, warn=None)
    gold_sentences, predicted_sentences = _sentences(gold), _sentences(predicted)
    in_memory = srl_eval.evaluate(gold_sentences, predicted_sentences, warn=None)
    mixed = srl_eval.evaluate(gold, predicted_sentences, warn=None)
    for result in (in_memory, mixed):
        assert result.to_dict() == from_files.to_dict()
        assert result.report() == from_files.report()
    # The scorer counts arguments as Sentence.num_arguments does (C- merged, V excluded).
    total_gold = sum(s.num_arguments() for s in gold_sentences)
    assert from_files.overall.correct + from_files.overall.missed == total_gold


def test_swap_equals_single_run_when_predicates_are_gold():
    gold, predicted = paths("single", "wsj")
    swap = srl_eval.evaluate_swap(gold, predicted, warn=None)
    normal, swapped = swap.normal, swap.swapped
    assert swapped.overall.correct == normal.overall.correct
    assert (swapped.overall.missed, swapped.overall.excess) == (normal.overall.excess, normal.overall.missed)
    assert f"{swap.precision:.2f}" == "84.45" and f"{swap.recall:.2f}" == "85.15" and f"{swap.f1:.2f}" == "84.80"


def test_command_prints_the_report(capsys):
    gold, predicted = paths("single", "dev")
    assert main(["srl-eval", str(gold), str(predicted)]) == 0
    out = capsys.readouterr().out
    assert out == srl_eval.evaluate(gold, predicted, warn=None).report()
    assert "   Overall     6975    1469    1371    82.60   83.57   83.09" in out.splitlines()

    assert main(["srl-eval", "--swap", str(gold), str(predicted)]) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert last == "      Swap    82.60   83.57   83.09"


def test_command_reports_misaligned_files_as_one_line(capsys):
    gold, _ = paths("single", "wsj")
    _, predicted = paths("single", "brown")
    assert main(["srl-eval", str(gold), str(predicted)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "do not align" in err and "conll05.brown.result.gz" in err


@pytest.mark.parametrize("relative", [
    "conll05/devel.24.props.gz", "conll05/test.wsj.props.gz", "conll05/test.brown.props.gz",
    "deepatt/single/conll05.wsj.result.gz", "deepatt/ensemble/conll05.brown.result.gz", "deepatt/LICENSE",
])
def test_fixtures_are_unchanged_copies_of_the_shared_data(relative):
    shared = {
        "conll05/devel.24.props.gz": ("conll05st", "conll05st-release", "devel", "props", "devel.24.props.gz"),
        "conll05/test.wsj.props.gz": ("conll05st", "conll05st-release", "test.wsj", "props", "test.wsj.props.gz"),
        "conll05/test.brown.props.gz": ("conll05st", "conll05st-release", "test.brown", "props",
                                        "test.brown.props.gz"),
        "deepatt/single/conll05.wsj.result.gz": ("deepatt-conll05-predictions", "single", "conll05.wsj.result.gz"),
        "deepatt/ensemble/conll05.brown.result.gz": ("deepatt-conll05-predictions", "ensemble",
                                                     "conll05.brown.result.gz"),
        "deepatt/LICENSE": ("deepatt-conll05-predictions", "LICENSE"),
    }[relative]
    assert (FIXTURES / relative).read_bytes() == shared_path(*shared).read_bytes()
