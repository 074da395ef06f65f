"""Conversions between bracket columns, labelled spans and BIO tags.

The CoNLL-2005/2012 "Start-End" format writes one column per predicate: ``(A0*`` opens a phrase of
type A0 at a token, ``*)`` closes the most recently opened phrase, ``(V*)`` is a one-token phrase and
``*`` is a token inside or outside phrases. This module is the single place that reads and writes that
format and converts spans to and from the BIO tags the models predict.

BIO decoding follows DeepAtt (Tan et al. 2018, §4): an ``I-Y`` that follows a ``B-X``/``I-X`` continues
the open span and the span keeps the label of its ``B``; an ``I-X`` with no open span starts a span.
"""

from __future__ import annotations

import re
from typing import Iterable, Optional, Sequence

from data_pipeline.errors import DataFormatError
from data_pipeline.sentence import Span

OUTSIDE = "O"
_BRACKET = re.compile(r"^((?:\([^()*]+)*)\*(\)*)$")


def brackets_to_spans(
    column: Sequence[str],
    path: Optional[str] = None,
    first_line: Optional[int] = None,
) -> list[Span]:
    """Parse one bracket column (one entry per token) into labelled spans.

    Args:
        column: the column's cells, e.g. ``["(A0*", "*)", "(V*)", "*"]``.
        path, first_line: where the column comes from, for error messages (line of token 0).

    Returns:
        Spans sorted by (start, end); nested phrases are returned as separate spans.

    Raises:
        DataFormatError: a cell that is not ``(LABEL*``…``*)…``, a close with nothing open, or a
            phrase still open at the end of the sentence.
    """
    spans: list[Span] = []
    stack: list[tuple[int, str]] = []

    def line_of(i: int) -> Optional[int]:
        return None if first_line is None else first_line + i

    for i, cell in enumerate(column):
        match = _BRACKET.match(cell)
        if match is None:
            raise DataFormatError(
                path, line_of(i), f"expected a bracket cell like '(A0*', '*', '*)' or '(V*)', found {cell!r}"
            )
        opens, closes = match.group(1), match.group(2)
        for label in opens.split("(")[1:]:
            stack.append((i, label))
        for _ in closes:
            if not stack:
                raise DataFormatError(path, line_of(i), f"unbalanced brackets: {cell!r} closes a phrase that was never opened")
            start, label = stack.pop()
            spans.append(Span(start, i, label))
    if stack:
        start, label = stack[-1]
        raise DataFormatError(
            path, line_of(start), f"unbalanced brackets: phrase '({label}*' opened here is never closed in its sentence"
        )
    spans.sort()
    return spans


def predicate_spans(
    column: Sequence[str],
    path: Optional[str] = None,
    first_line: Optional[int] = None,
) -> list[Span]:
    """:func:`brackets_to_spans` of one predicate's column, which marks its predicate once: at most
    one ``V`` phrase (``(V*)``, or ``(V*`` … ``*)`` over several tokens).

    Raises:
        DataFormatError: as :func:`brackets_to_spans`, or a second ``V`` phrase (at its line).
    """
    spans = brackets_to_spans(column, path, first_line)
    verbs = [span for span in spans if span.label == "V"]
    if len(verbs) > 1:
        line = None if first_line is None else first_line + verbs[1].start
        raise DataFormatError(path, line, f"a second (V*) in the predicate's column (tokens {verbs[0].start + 1} and "
                                          f"{verbs[1].start + 1}); expected one V phrase per column: its predicate")
    return spans


def spans_to_brackets(spans: Iterable[Span], length: int) -> list[str]:
    """Write spans as a bracket column of ``length`` cells (inverse of :func:`brackets_to_spans`)."""
    opens: list[list[Span]] = [[] for _ in range(length)]
    closes = [0] * length
    for span in spans:
        if not 0 <= span.start <= span.end < length:
            raise ValueError(f"span {span} does not fit a sentence of {length} tokens")
        opens[span.start].append(span)
        closes[span.end] += 1
    cells = []
    for i in range(length):
        # Outer (longer) phrases open first so nested phrases close before them.
        ordered = sorted(opens[i], key=lambda s: -s.end)
        cells.append("".join(f"({s.label}" for s in ordered) + "*" + ")" * closes[i])
    return cells


def spans_to_bio(spans: Iterable[Span], length: int) -> list[str]:
    """Tag ``length`` tokens with ``B-X``/``I-X``/``O`` from non-overlapping spans.

    Raises:
        ValueError: two spans overlap (BIO cannot express nesting; callers count and skip those).
    """
    tags = [OUTSIDE] * length
    for span in sorted(spans):
        if any(tags[i] != OUTSIDE for i in range(span.start, span.end + 1)):
            raise ValueError(f"span {span} overlaps another span; BIO tags cannot express nested phrases")
        tags[span.start] = f"B-{span.label}"
        for i in range(span.start + 1, span.end + 1):
            tags[i] = f"I-{span.label}"
    return tags


def overlapping_spans(spans: Sequence[Span]) -> list[Span]:
    """The spans that lie (partly) inside an earlier, longer span; empty for BIO-expressible input."""
    result = []
    ordered = sorted(spans, key=lambda s: (s.start, -s.end))
    covered_until = -1
    for span in ordered:
        if span.start <= covered_until:
            result.append(span)
        else:
            covered_until = span.end
    return result


def bio_to_spans(tags: Sequence[str]) -> list[Span]:
    """Read spans off BIO tags with DeepAtt's rule for invalid sequences.

    ``B-X`` starts a span; ``I-*`` continues an open span whatever its label (the ``B``'s label covers
    the span); ``I-X`` with no open span starts an X span; ``O`` closes.
    """
    spans: list[Span] = []
    start: Optional[int] = None
    label = ""
    for i, tag in enumerate(tags):
        if tag == OUTSIDE or tag.startswith("B-") or (tag.startswith("I-") and start is None):
            if start is not None:
                spans.append(Span(start, i - 1, label))
                start = None
            if tag != OUTSIDE:
                start, label = i, tag[2:]
        elif not tag.startswith("I-"):
            raise ValueError(f"tag {tag!r} at position {i} is not O, B-X or I-X")
    if start is not None:
        spans.append(Span(start, len(tags) - 1, label))
    return spans
