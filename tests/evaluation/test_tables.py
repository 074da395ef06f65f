"""Structure of the Markdown result tables."""

from __future__ import annotations

from lisa_tf.evaluation.srl_eval import Counts, SrlEvalResult
from lisa_tf.evaluation.tables import MISSING, parsing_table, predicate_table, srl_table


def cells(line):
    assert line.startswith("| ") and line.endswith(" |")
    return [cell.strip() for cell in line[2:-2].split(" | ")]


def test_srl_table_has_a_p_r_f1_group_per_split():
    results = {
        "SA": {"Dev": {"precision": 83.0, "recall": 82.0, "f1": 82.5},
               "WSJ Test": {"P": 84.0, "R": 83.44, "F1": 83.72}},
        "LISA": {"WSJ Test": {"precision": 85.0, "recall": 82.3, "f1": 83.61}, "Brown Test": {"f1": 71.91}},
    }
    table = srl_table(results, ["Dev", "WSJ Test", "Brown Test"], caption="CoNLL-2005", bold_best=True)
    lines = table.splitlines()
    assert lines[0] == "CoNLL-2005" and lines[1] == ""
    header, rule, *rows = lines[2:]
    splits = ("Dev", "WSJ Test", "Brown Test")
    assert cells(header) == ["Model"] + [f"{s} {m}" for s in splits for m in ("P", "R", "F1")]
    assert cells(rule) == ["---"] + ["---:"] * 9
    assert [cells(row)[0] for row in rows] == ["SA", "LISA"]
    sa, lisa = cells(rows[0]), cells(rows[1])
    assert all(len(row) == 10 for row in (sa, lisa))
    assert sa[1:4] == ["**83.00**", "**82.00**", "**82.50**"] and sa[7:] == [MISSING] * 3
    assert sa[4:7] == ["84.00", "**83.44**", "**83.72**"]
    assert lisa[4:7] == ["**85.00**", "82.30", "83.61"] and lisa[7:] == [MISSING, MISSING, "**71.91**"]


def test_split_order_defaults_to_first_appearance_and_accepts_result_objects():
    result = SrlEvalResult(overall=Counts(correct=3, excess=1, missed=0))
    table = srl_table({"DeepAtt": {"WSJ": result, "Brown": {"f1": 1}}}, digits=1)
    header, _, row = table.splitlines()
    assert cells(header)[1:] == ["WSJ P", "WSJ R", "WSJ F1", "Brown P", "Brown R", "Brown F1"]
    assert cells(row)[1:4] == ["75.0", "100.0", "85.7"]


def test_parsing_table_columns():
    table = parsing_table({"LISA": {"pos": 96.92, "uas": 94.92, "las": 91.87}, "D&M": {"UAS": 95.7}})
    header, rule, first, second = table.splitlines()
    assert cells(header) == ["Model", "POS", "UAS", "LAS"]
    assert cells(first) == ["LISA", "96.92", "94.92", "91.87"]
    assert cells(second) == ["D&M", MISSING, "95.70", MISSING]
    # a parser that tags UPOS too: a UPOS column first, missing for the rows without it
    header, _, first, second = parsing_table({"D&M": {"upos": 95.1, "pos": 94.3, "uas": 86.3, "las": 82.3},
                                              "LISA": {"pos": 90.0, "uas": 80.8, "las": 74.9}}).splitlines()
    assert cells(header) == ["Model", "UPOS", "POS", "UAS", "LAS"]
    assert cells(first) == ["D&M", "95.10", "94.30", "86.30", "82.30"] and cells(second)[:2] == ["LISA", MISSING]


def test_predicate_table_layout():
    table = predicate_table({"LISA": {"WSJ Test": {"precision": 98.9, "recall": 97.9, "f1": 98.4}}})
    header, _, row = table.splitlines()
    assert cells(header) == ["Model", "WSJ Test P", "WSJ Test R", "WSJ Test F1"]
    assert cells(row) == ["LISA", "98.90", "97.90", "98.40"]
