import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from data_pipeline.errors import DataFormatError
from data_pipeline.sentence import Span
from data_pipeline.spans import (
    bio_to_spans,
    brackets_to_spans,
    overlapping_spans,
    spans_to_bio,
    spans_to_brackets,
)


def test_brackets_to_spans_reads_the_conll05_example():
    column = ["*", "(A1*", "*", "*)", "(AM-NEG*)", "(V*)", "(A4*)", "(AM-TMP*)"]
    assert brackets_to_spans(column) == [
        Span(1, 3, "A1"), Span(4, 4, "AM-NEG"), Span(5, 5, "V"), Span(6, 6, "A4"), Span(7, 7, "AM-TMP")
    ]


def test_nested_phrases_are_separate_spans_and_round_trip():
    column = ["(A1(C-A1*", "*)", "*)", "*"]
    spans = brackets_to_spans(column)
    assert spans == [Span(0, 1, "C-A1"), Span(0, 2, "A1")]
    assert spans_to_brackets(spans, 4) == column
    assert overlapping_spans(spans) == [Span(0, 1, "C-A1")]


@pytest.mark.parametrize("column, line", [(["(A0*", "*"], 10), (["*", "*)"], 11), (["(A0", "*)"], 10)])
def test_malformed_columns_name_the_line(column, line):
    with pytest.raises(DataFormatError) as info:
        brackets_to_spans(column, path="x.props", first_line=10)
    assert info.value.path == "x.props" and info.value.line == line


@st.composite
def flat_spans(draw):
    length = draw(st.integers(1, 25))
    cuts = sorted(draw(st.sets(st.integers(0, length), max_size=12)) | {0, length})
    spans = []
    for a, b in zip(cuts, cuts[1:]):
        if draw(st.booleans()):
            spans.append(Span(a, b - 1, draw(st.sampled_from(["A0", "A1", "C-A1", "R-A0", "AM-TMP", "V"]))))
    return spans, length


@given(flat_spans())
@settings(suppress_health_check=[HealthCheck.too_slow])  # generation slows down on a busy machine
def test_round_trips(case):
    spans, length = case
    assert brackets_to_spans(spans_to_brackets(spans, length)) == spans
    assert bio_to_spans(spans_to_bio(spans, length)) == spans


def test_bio_violations_follow_deepatt_rule():
    # I-A1 after B-A0 continues the A0 span; I-A1 after O starts an A1 span.
    assert bio_to_spans(["B-A0", "I-A1", "O", "I-A1", "I-A1"]) == [Span(0, 1, "A0"), Span(3, 4, "A1")]


def test_spans_to_bio_refuses_overlap():
    with pytest.raises(ValueError):
        spans_to_bio([Span(0, 2, "A1"), Span(1, 1, "A0")], 3)
