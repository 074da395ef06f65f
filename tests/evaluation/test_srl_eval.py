"""srl-eval semantics on hand-made props and on generated ones (hypothesis)."""

from __future__ import annotations

import gzip
import os
import tempfile

import pytest
from hypothesis import given, settings, strategies as st

from data_pipeline.errors import DataFormatError
from data_pipeline.sentence import Predicate, Sentence, Span
from data_pipeline.spans import spans_to_brackets
from lisa_tf.evaluation import EvaluationInputError
from lisa_tf.evaluation.srl_eval import evaluate, evaluate_swap


def write_props(path, sentences):
    """Write rows of cells (one list per token) with blank lines between sentences."""
    text = "\n\n".join("\n".join(" ".join(row) for row in rows) for rows in sentences) + "\n\n"
    if str(path).endswith(".gz"):
        with gzip.open(path, "wt") as handle:
            handle.write(text)
    else:
        with open(path, "w") as handle:
            handle.write(text)
    return path


def props(*columns):
    """Rows from columns: ``props(targets, col1, col2, ...)``."""
    return [list(cells) for cells in zip(*columns)]


# A five-token sentence "The cat , it sat": A1 = "The cat" continued by C-A1 = "it", V = "sat".
TARGETS = ["-", "-", "-", "-", "sit"]
GOLD_DISCONTINUOUS = ["(A1*", "*)", "*", "(C-A1*)", "(V*)"]


def score(tmp_path, gold_rows, predicted_rows, **kwargs):
    gold = write_props(tmp_path / "gold.props", gold_rows)
    predicted = write_props(tmp_path / "pred.props.gz", predicted_rows)
    return evaluate(gold, predicted, warn=kwargs.pop("warn", None), **kwargs)


def test_continuation_joins_its_argument_into_one(tmp_path):
    result = score(tmp_path, [props(TARGETS, GOLD_DISCONTINUOUS)], [props(TARGETS, GOLD_DISCONTINUOUS)])
    assert (result.overall.correct, result.overall.excess, result.overall.missed) == (1, 0, 0)
    assert set(result.per_type) == {"A1"} and result.excluded["V"].correct == 1
    assert result.perfect_propositions == 1 and result.perfect_percentage == 100.0


def test_missing_continuation_makes_the_whole_argument_wrong(tmp_path):
    predicted = ["(A1*", "*)", "*", "*", "(V*)"]
    result = score(tmp_path, [props(TARGETS, GOLD_DISCONTINUOUS)], [props(TARGETS, predicted)])
    assert (result.overall.correct, result.overall.excess, result.overall.missed) == (0, 1, 1)
    assert result.perfect_propositions == 0 and result.f1 == 0.0


def test_continuation_without_head_is_a_plain_argument(tmp_path):
    gold = ["*", "*", "*", "(A1*)", "(V*)"]
    predicted = ["*", "*", "*", "(C-A1*)", "(V*)"]
    result = score(tmp_path, [props(TARGETS, gold)], [props(TARGETS, predicted)])
    assert (result.overall.correct, result.overall.excess, result.overall.missed) == (1, 0, 0)
    assert result.orphan_continuations == 1 and "C-A1" in result.notes[0] and "sentence 0" in result.notes[0]


def test_continuation_attaches_to_the_most_recent_argument_of_its_type(tmp_path):
    targets = ["-"] * 5 + ["v"]
    gold = ["(A1*)", "*", "(A1*)", "*", "(C-A1*)", "(V*)"]
    # Gold: A1 = [0], A1 = [2] + [4]. A prediction joining the piece to the first A1 is wrong.
    wrong = ["(A1*)", "*", "*", "*", "*", "(V*)"]
    result = score(tmp_path, [props(targets, gold)], [props(targets, wrong)])
    assert (result.overall.correct, result.overall.missed) == (1, 1)


def test_reference_arguments_are_their_own_type(tmp_path):
    targets = ["-", "-", "-", "v"]
    gold = ["(A0*)", "(R-A0*)", "*", "(V*)"]
    predicted = ["(A0*)", "(A0*)", "*", "(V*)"]
    result = score(tmp_path, [props(targets, gold)], [props(targets, predicted)])
    assert result.per_type["A0"].correct == 1 and result.per_type["A0"].excess == 1
    assert result.per_type["R-A0"].missed == 1 and result.per_type["R-A0"].correct == 0


def test_verb_and_its_continuation_are_excluded(tmp_path):
    targets = ["-", "v", "-", "-"]
    gold = ["(A0*)", "(V*)", "(C-V*)", "(A1*)"]
    predicted = ["(A0*)", "(V*)", "*", "(A1*)"]
    result = score(tmp_path, [props(targets, gold)], [props(targets, predicted)])
    assert (result.overall.correct, result.overall.excess, result.overall.missed) == (2, 0, 0)
    assert result.excluded["V"].excess == 1 and result.excluded["V"].missed == 1
    assert "C-V" not in result.per_type and "C-V" not in result.excluded
    assert result.perfect_propositions == 1
    assert result.report().splitlines()[-2].split()[:4] == ["V", "0", "1", "1"]


def test_spans_must_match_exactly(tmp_path):
    targets = ["-", "-", "-", "v"]
    gold = ["(A0*", "*)", "*", "(V*)"]
    predicted = ["(A0*)", "*", "*", "(V*)"]
    result = score(tmp_path, [props(targets, gold)], [props(targets, predicted)])
    assert (result.overall.correct, result.overall.excess, result.overall.missed) == (0, 1, 1)


def test_alignment_warnings_and_their_effect(tmp_path):
    gold = props(["-", "go", "-", "come", "-"],
                 ["(A0*)", "(V*)", "*", "*", "*"],
                 ["*", "*", "(A1*)", "(V*)", "*"])
    # No prop for "go", "come" predicted as "came", an extra prop at position 0 (before the last gold one).
    predicted = props(["x", "-", "-", "came", "-"],
                      ["(V*)", "(A1*)", "*", "*", "*"],
                      ["*", "*", "(A1*)", "(V*)", "*"])
    warnings = []
    result = score(tmp_path, [gold], [predicted], warn=warnings.append)
    assert warnings == [
        "WARNING : sentence 0 : verb x at position 0 : found predicted prop without its gold reference! Skipping prop!",
        "WARNING : sentence 0 : verb go at position 1 : missing predicted prop! Counting all arguments as missed!",
        "WARNING : sentence 0 : props do not match : expecting come at position 3, found came at position 3! "
        "Counting all gold arguments as missed!",
    ]
    assert result.propositions == 2 and counts(result) == (0, 0, 2)
    assert (result.skipped_predicted_props, result.missing_predicted_props, result.verb_mismatches) == (1, 1, 1)
    assert result.excluded["V"].missed == 2
    lenient = score(tmp_path, [gold], [predicted], match_verbs=False)
    assert (lenient.overall.correct, lenient.overall.missed) == (1, 1)


def test_props_after_the_last_gold_target_are_ignored_but_reported(tmp_path):
    gold = props(["go", "-", "-"], ["(V*)", "(A1*)", "*"])
    predicted = props(["go", "-", "see"], ["(V*)", "(A1*)", "*"], ["(A0*)", "*", "(V*)"])
    warnings = []
    result = score(tmp_path, [gold], [predicted], warn=warnings.append)
    assert (result.overall.correct, result.overall.excess, result.overall.missed) == (1, 0, 0)
    assert result.skipped_predicted_props == 1 and "verb see at position 2" in warnings[0]


def test_sentence_without_predicates_counts_as_a_sentence(tmp_path):
    gold = [props(["-", "-"]), props(["go", "-"], ["(V*)", "(A1*)"])]
    result = score(tmp_path, gold, gold)
    assert (result.sentences, result.propositions) == (2, 1)


@pytest.mark.parametrize("side", ["gold", "pred"])
@pytest.mark.parametrize("bad, line", [
    (["(A0*", "*", "(V*)"], 1), (["*", "*)", "(V*)"], 2), (["(A0", "*)", "(V*)"], 1),
])
def test_malformed_brackets_name_the_file_and_line(tmp_path, side, bad, line):
    good = props(["-", "-", "v"], ["(A0*", "*)", "(V*)"])
    broken = props(["-", "-", "v"], bad)
    header = props(["-"])  # a first sentence, so the bad one starts on line 3
    gold = write_props(tmp_path / "gold.props", [header, broken if side == "gold" else good])
    predicted = write_props(tmp_path / "pred.props", [header, broken if side == "pred" else good])
    with pytest.raises(DataFormatError) as info:
        evaluate(gold, predicted, warn=None)
    assert info.value.path == str(gold if side == "gold" else predicted)
    assert info.value.line == 2 + line


def test_misaligned_sentences_stop_with_a_clear_error(tmp_path):
    gold = [props(["go", "-"], ["(V*)", "*"]), props(["go"], ["(V*)"])]
    with pytest.raises(EvaluationInputError, match="do not align"):
        score(tmp_path, gold, [props(["go", "-", "-"], ["(V*)", "*", "*"])])
    with pytest.raises(EvaluationInputError, match="more sentences"):
        score(tmp_path, gold, gold[:1])
    longer = score(tmp_path, gold, gold + gold)
    assert longer.ignored_predicted_sentences == 2 and longer.sentences == 2


def test_ragged_rows_are_an_error(tmp_path):
    gold = [[["go", "(V*)"], ["-"]]]
    with pytest.raises(DataFormatError) as info:
        score(tmp_path, gold, gold)
    assert info.value.line == 2 and "columns" in info.value.message


# --------------------------------------------------------------------------------------------------
# Generated propositions.

LABELS = ["A0", "A1", "A2", "A3", "AM-TMP", "AM-LOC", "AM-MNR", "R-A0", "R-A1", "R-AM-LOC"]


@st.composite
def generated_sentence(draw):
    """A sentence with 1-3 predicates; each argument an X piece plus optional C-X pieces.

    Types are unique per predicate, so every C-X piece belongs to the X before it. Returns the sentence
    and, per predicate, its groups ``[label, [spans...]]``.
    """
    length = draw(st.integers(2, 18))
    positions = sorted(draw(st.sets(st.integers(0, length - 1), min_size=1, max_size=min(3, length))))
    predicates, all_groups = [], []
    for position in positions:
        segments, current = [], None
        for i in range(length):
            action = "O" if i == position else draw(st.sampled_from("OBII"))
            if action == "O":
                current = None
            elif action == "B" or current is None or current[1] != i - 1:
                current = [i, i]
                segments.append(current)
            else:
                current[1] = i
        labels = draw(st.permutations(LABELS))
        groups = []
        for start, end in segments:
            if groups and draw(st.booleans()) and draw(st.booleans()):
                group = draw(st.sampled_from(groups))
                group[1].append(Span(start, end, "C-" + group[0]))
            elif len(groups) < len(labels):
                label = labels[len(groups)]
                groups.append([label, [Span(start, end, label)]])
        spans = [span for _, pieces in groups for span in pieces] + [Span(position, position, "V")]
        predicates.append(Predicate(position, f"v{position}", arguments=tuple(sorted(spans))))
        all_groups.append(groups)
    return Sentence(words=["w"] * length, predicates=predicates), all_groups


def rebuild(sentence, groups_per_predicate):
    predicates = []
    for predicate, groups in zip(sentence.predicates, groups_per_predicate):
        spans = [span for _, pieces in groups for span in pieces] + [Span(predicate.position, predicate.position, "V")]
        predicates.append(Predicate(predicate.position, predicate.lemma, arguments=tuple(sorted(spans))))
    return Sentence(words=sentence.words, predicates=predicates)


def counts(result):
    return result.overall.correct, result.overall.excess, result.overall.missed


def choose_group(data, groups_per_predicate, condition=lambda group: True):
    candidates = [(k, j) for k, groups in enumerate(groups_per_predicate)
                  for j, group in enumerate(groups) if condition(group)]
    if not candidates:
        return None
    return data.draw(st.sampled_from(candidates))


def copy_groups(groups_per_predicate):
    return [[[label, list(pieces)] for label, pieces in groups] for groups in groups_per_predicate]


@settings(max_examples=150, deadline=None)
@given(generated_sentence())
def test_a_sentence_scored_against_itself_is_perfect(generated):
    sentence, groups = generated
    result = evaluate([sentence], [sentence], warn=None)
    n = sum(len(g) for g in groups)
    assert counts(result) == (n, 0, 0) == (sentence.num_arguments(), 0, 0)
    assert result.perfect_propositions == result.propositions == len(sentence.predicates)
    if n:
        assert result.precision == result.recall == result.f1 == 100.0
    assert set(result.per_type) == {label for g in groups for label, _ in g}
    assert result.excluded["V"].correct == len(sentence.predicates)


@settings(max_examples=150, deadline=None)
@given(generated_sentence(), st.data())
def test_dropping_an_argument_adds_exactly_one_missed(generated, data):
    sentence, groups = generated
    choice = choose_group(data, groups)
    if choice is None:
        return
    k, j = choice
    changed = copy_groups(groups)
    label = changed[k].pop(j)[0]
    result = evaluate([sentence], [rebuild(sentence, changed)], warn=None)
    n = sum(len(g) for g in groups)
    assert counts(result) == (n - 1, 0, 1)
    assert result.per_type[label].missed == 1
    assert result.perfect_propositions == result.propositions - 1


@settings(max_examples=150, deadline=None)
@given(generated_sentence(), st.data())
def test_relabelling_adds_one_excess_and_one_missed(generated, data):
    sentence, groups = generated
    choice = choose_group(data, groups)
    if choice is None:
        return
    k, j = choice
    changed = copy_groups(groups)
    old, pieces = changed[k][j]
    new = "AM-NEW"
    changed[k][j] = [new, [Span(s.start, s.end, new if s.label == old else "C-" + new) for s in pieces]]
    result = evaluate([sentence], [rebuild(sentence, changed)], warn=None)
    n = sum(len(g) for g in groups)
    assert counts(result) == (n - 1, 1, 1)
    assert result.per_type[new].excess == 1 and result.per_type[old].missed == 1


@settings(max_examples=150, deadline=None)
@given(generated_sentence(), st.data())
def test_removing_a_continuation_piece_makes_its_argument_wrong(generated, data):
    sentence, groups = generated
    choice = choose_group(data, groups, lambda group: len(group[1]) > 1)
    if choice is None:
        return
    k, j = choice
    changed = copy_groups(groups)
    pieces = changed[k][j][1]
    pieces.pop(data.draw(st.integers(1, len(pieces) - 1)))
    result = evaluate([sentence], [rebuild(sentence, changed)], warn=None)
    n = sum(len(g) for g in groups)
    assert counts(result) == (n - 1, 1, 1)


@settings(max_examples=40, deadline=None)
@given(generated_sentence(), generated_sentence())
def test_files_and_sentences_give_the_same_result(first, second):
    sentences = [first[0], second[0]]
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "props.gz")
        rows = []
        for sentence in sentences:
            targets = ["-"] * len(sentence)
            for predicate in sentence.predicates:
                targets[predicate.position] = predicate.lemma
            columns = [spans_to_brackets(p.arguments, len(sentence)) for p in sentence.predicates]
            rows.append(props(targets, *columns))
        write_props(path, rows)
        from_file = evaluate(path, sentences, warn=None)
        in_memory = evaluate(sentences, sentences, warn=None)
    assert from_file.to_dict() == in_memory.to_dict()


# --------------------------------------------------------------------------------------------------
# The end-to-end (swap) convention.


@pytest.mark.parametrize("extra_position", [0, 4])
def test_swap_penalises_arguments_of_a_spurious_predicate(tmp_path, extra_position):
    targets = ["-", "-", "go", "-", "-"]
    gold = props(targets, ["(A0*", "*)", "(V*)", "(A1*)", "*"])
    spurious = ["*"] * 5
    spurious[extra_position] = "(V*)"
    others = [i for i in range(5) if i not in (2, extra_position)]
    spurious[others[0]] = "(A0*)"
    spurious[others[-1]] = "(A1*)"
    predicted_targets = list(targets)
    predicted_targets[extra_position] = "see"
    columns = [["(A0*", "*)", "(V*)", "(A1*)", "*"], spurious]
    if extra_position < 2:
        columns.reverse()  # argument columns follow the order of the targets
    predicted = props(predicted_targets, *columns)

    single = score(tmp_path, [gold], [predicted])
    assert counts(single) == (2, 0, 0) and single.precision == 100.0 and single.skipped_predicted_props == 1

    gold_path = write_props(tmp_path / "g.props", [gold])
    predicted_path = write_props(tmp_path / "p.props", [predicted])
    swap = evaluate_swap(gold_path, predicted_path, warn=None)
    assert swap.recall == 100.0
    assert swap.precision == pytest.approx(50.0)  # 2 of the 4 predicted arguments are right
    assert swap.f1 == pytest.approx(2 * 50 * 100 / 150)
    assert swap.swapped.missing_predicted_props == 1
    assert swap.report().splitlines()[-1] == "      Swap    50.00  100.00   66.67"


def test_a_nested_phrase_is_an_argument_and_unsettles_its_parent(tmp_path):
    # As in the script: the inner A0 is an argument of its own, and the outer A1, having a sub-phrase,
    # no longer matches the single gold A1 with the same extent.
    targets = ["-", "-", "v"]
    gold = ["(A1*", "*)", "(V*)"]
    nested = ["(A1(A0*)", "*)", "(V*)"]
    result = score(tmp_path, [props(targets, gold)], [props(targets, nested)])
    assert counts(result) == (0, 2, 1)
    assert result.per_type["A0"].excess == 1 and result.per_type["A1"].excess == 1
