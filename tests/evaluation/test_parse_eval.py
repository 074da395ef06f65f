"""Parsing, POS and predicate metrics on hand-made sentences whose answers are worked out by hand."""

from __future__ import annotations

import pytest

from data_pipeline.sentence import Predicate, Sentence
from lisa_tf.evaluation import EvaluationInputError
from lisa_tf.evaluation.parse_eval import (
    attachment_scores,
    evaluate_parsing,
    is_punctuation,
    parse_scores,
    pos_accuracy,
    predicate_detection,
)

WORDS = ["The", "cat", "sat", ".", "$", "--"]


def gold_sentence():
    return Sentence(words=WORDS, pos=["DT", "NN", "VBD", ".", "$", ":"], heads=[2, 3, 0, 3, 3, 3],
                    dep_labels=["det", "nsubj", "root", "punct", "dep", "punct"],
                    predicates=[Predicate(2, "sit")])


def predicted_sentence():
    return Sentence(words=WORDS, pos=["DT", "NN", "VBN", ".", "$", ":"], heads=[2, 3, 0, 1, 1, 3],
                    dep_labels=["det", "obj", "root", "punct", "dep", "punct"],
                    predicates=[Predicate(2, "sit"), Predicate(0, "the")])


@pytest.mark.parametrize("form, expected", [
    (".", True), (",", True), ("''", True), ("--", True), ("«", True), ("…", True), ("%", True), ("?!", True),
    ("$", False), ("``", False), ("A.", False), ("-LRB-", False), ("", False), ("1", False),
])
def test_punctuation_is_unicode_category_p(form, expected):
    assert is_punctuation(form) is expected


def test_attachment_scores_exclude_punctuation_tokens():
    # Scored: The, cat, sat, $ ("." and "--" are punctuation; "$" is a symbol, so it is scored).
    # Heads right: The, cat, sat (not $) -> 3/4. Head and label right: The, sat -> 2/4.
    scores = attachment_scores([gold_sentence()], [predicted_sentence()])
    assert (scores.tokens, scores.scored, scores.punctuation) == (6, 4, 2)
    assert (scores.head_correct, scores.labelled_correct) == (3, 2)
    assert scores.uas == 75.0 and scores.las == 50.0


def test_attachment_scores_with_punctuation_counted():
    # All six: heads right for The, cat, sat, "--" (4/6); labels also right for The, sat, "--" (3/6).
    scores = attachment_scores([gold_sentence()], [predicted_sentence()], exclude_punctuation=False)
    assert scores.scored == 6 and scores.uas == pytest.approx(400 / 6) and scores.las == pytest.approx(50.0)


def test_pos_accuracy_counts_every_token():
    accuracy = pos_accuracy([gold_sentence()], [predicted_sentence()])
    assert (accuracy.correct, accuracy.total) == (5, 6)


def test_predicate_detection_by_position():
    second_gold = Sentence(words=["a", "b", "c", "d"], predicates=[Predicate(1, "b"), Predicate(3, "d")])
    second_predicted = Sentence(words=["a", "b", "c", "d"], predicates=[])
    scores = predicate_detection([gold_sentence(), second_gold], [predicted_sentence(), second_predicted])
    # Right: position 2 of sentence 1. Predicted 2, gold 3.
    assert (scores.correct, scores.predicted, scores.gold) == (1, 2, 3)
    assert scores.precision == 50.0 and scores.recall == pytest.approx(100 / 3) and scores.f1 == pytest.approx(40.0)


def test_evaluate_parsing_collects_what_both_sides_have():
    out = evaluate_parsing([gold_sentence()], [predicted_sentence()])
    assert out["uas"] == 75.0 and out["las"] == 50.0 and out["pos"] == pytest.approx(500 / 6)
    assert out["predicate_precision"] == 50.0 and out["predicate_recall"] == 100.0
    only_predicates = evaluate_parsing([Sentence(words=["a"])], [Sentence(words=["a"])])
    assert set(only_predicates) == {"predicate_precision", "predicate_recall", "predicate_f1"}
    assert only_predicates["predicate_f1"] == 0.0


def test_perfect_prediction_scores_100():
    out = evaluate_parsing([gold_sentence()], [gold_sentence()])
    assert out == {"pos": 100.0, "uas": 100.0, "las": 100.0, "predicate_precision": 100.0,
                   "predicate_recall": 100.0, "predicate_f1": 100.0}


def test_mismatched_inputs_are_clear_errors():
    with pytest.raises(EvaluationInputError, match="expected as many predicted sentences"):
        attachment_scores([gold_sentence()], [])
    short = Sentence(words=WORDS[:3], heads=[2, 0, 2], dep_labels=["a", "b", "c"], source="p.conllu", line=7)
    with pytest.raises(EvaluationInputError, match="expected 6 predicted tokens, found 3") as info:
        attachment_scores([gold_sentence()], [short])
    assert (info.value.path, info.value.line) == ("p.conllu", 7)
    no_heads = Sentence(words=WORDS)
    with pytest.raises(EvaluationInputError, match="predicted side has no heads"):
        attachment_scores([gold_sentence()], [no_heads])
    with pytest.raises(ValueError, match="expected layers"):
        evaluate_parsing([gold_sentence()], [gold_sentence()], layers=["srl"])


@pytest.mark.parametrize("reader, text", [
    ("conllu", "1\tThe\tthe\tDET\tDT\t_\t2\t_\t_\t_\n2\tcat\tcat\tNOUN\tNN\t_\t3\t_\t_\t_\n"
               "3\tsat\tsit\tVERB\tVBD\t_\t0\t_\t_\t_\n4\t.\t.\tPUNCT\t.\t_\t3\t_\t_\t_\n"),
    ("lisa", None),  # written by lisa_lines: "_" labels
])
def test_trees_without_labels_print_las_not_applicable(reader, text, tmp_path):
    """Data whose trees have heads but ``_`` labels: LAS is not applicable ("n/a" in the tables, null in
    the metrics), not 0.00, for a parser run and for LISA's own parse alike; UAS is scored."""
    import dataclasses

    from data_pipeline.readers import conllu, lisa_columns
    from lisa_tf.evaluation.runs import metrics_markdown

    path = tmp_path / "data.txt"
    if text is None:
        text = "\n".join(lisa_columns.lisa_lines(Sentence(words=["The", "cat", "sat", "."], pos=["DT", "NN", "VBD", "."],
                                                           heads=[2, 3, 0, 3], predicates=[Predicate(2, "sit")]), 0))
    path.write_text(text + "\n")
    read = conllu.read_conllu if reader == "conllu" else lisa_columns.read_lisa
    gold = read(str(path))
    assert gold[0].heads == [2, 3, 0, 3] and gold[0].dep_labels is None
    predicted = [dataclasses.replace(gold[0], heads=[2, 3, 0, 2], dep_labels=["det", "nsubj", "root", "punct"])]
    scores = parse_scores(gold, predicted)
    assert scores["uas"] == 100.0 and scores["las"] is None and scores["f1"] == 100.0
    assert evaluate_parsing(gold, predicted, layers=["parse"]) == {"uas": 100.0, "las": None}
    table = metrics_markdown({"runs": ["parser"], "condition": "parser", "parsing": {"uas": 100.0, "las": None}})
    assert table.splitlines()[-1] == "| parser | — | 100.00 | n/a |", table


def test_las_is_not_applicable_on_labels_of_another_scheme():
    """Gold labels that share none with the model's (a ``.gold_conll`` file's labels converted from its
    constituency trees, against a model's UD labels) cannot score it: LAS is None ("n/a"), not 0.00,
    and a parser's dev F1 is its UAS. One label in common, and LAS is scored."""
    import dataclasses

    model_labels = ["det", "nsubj", "obj", "root", "punct", "dep"]
    other = dataclasses.replace(gold_sentence(), dep_labels=["NMOD", "SBJ", "ROOT", "P", "DEP", "P"])
    assert evaluate_parsing([other], [predicted_sentence()], layers=["parse"], labels=model_labels) == {
        "uas": 75.0, "las": None}
    assert evaluate_parsing([other], [predicted_sentence()], layers=["parse"])["las"] is None  # the predicted labels
    scores = parse_scores([other], [predicted_sentence()], model_labels)
    assert scores["las"] is None and scores["f1"] == scores["uas"] == 75.0
    shared = dataclasses.replace(other, dep_labels=["det", "SBJ", "ROOT", "P", "DEP", "P"])
    assert evaluate_parsing([shared], [predicted_sentence()], layers=["parse"], labels=model_labels)["las"] == 25.0
