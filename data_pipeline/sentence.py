"""The one sentence type every reader returns.

A :class:`Sentence` carries the words, gold POS, an optional constituency tree (CoNLL parse-bit
column), optional dependency heads and labels, and its predicates. Each :class:`Predicate` keeps its
arguments as raw labelled spans exactly as the bracket column wrote them: a discontinuous argument is
an ``X`` span followed by ``C-X`` spans, a reference argument is an ``R-X`` span, and the predicate's
own ``V`` span is kept too. Grouping ``C-`` pieces into one argument is the scorer's job
(:mod:`lisa_tf.evaluation.srl_eval`), so writing a sentence back out reproduces its input.
"""

from __future__ import annotations

import dataclasses
from typing import Optional


@dataclasses.dataclass(frozen=True, order=True)
class Span:
    """A labelled token span, ``start`` and ``end`` inclusive and 0-based."""

    start: int
    end: int
    label: str


@dataclasses.dataclass(frozen=True)
class Predicate:
    """One predicate (target) of a sentence.

    Attributes:
        position: 0-based token index of the predicate.
        lemma: the predicate lemma (CoNLL-2005 props column 1 / CoNLL-2012 frame lemma).
        sense: sense or roleset id (e.g. ``"01"`` or ``"join.01"``), ``None`` when the data has none.
        arguments: labelled spans in order of their start, including the ``V`` span.
        sense_source: for a predicted sense, where it comes from (``"model"``, ``"frame_index"`` or
            ``"none"``: :mod:`lisa_tf.decoding.sense_choice`); ``None`` for data read from a file.
    """

    position: int
    lemma: str
    sense: Optional[str] = None
    arguments: tuple[Span, ...] = ()
    sense_source: Optional[str] = None

    @property
    def roleset(self) -> Optional[str]:
        """The PropBank roleset id (``"kill.01"``): :attr:`sense` when it names one, else
        ``lemma.sense`` (CoNLL-2005 and OntoNotes give the number only); ``None`` without a sense."""
        return roleset_id(self.lemma, self.sense)


def roleset_id(lemma: str, sense: Optional[str]) -> Optional[str]:
    """``"kill.01"`` from a predicate's lemma and sense column (``"kill.01"`` or ``"01"``); ``None``
    when the sense is missing (``None``, ``""`` or ``"-"``)."""
    if not sense or sense == "-":
        return None
    return sense if "." in sense else f"{lemma}.{sense}"


@dataclasses.dataclass
class Sentence:
    """A tokenised sentence with its syntax and semantic roles.

    Attributes:
        words: tokens; ``None`` entries are not allowed (readers fill masked words or fail).
        pos: gold POS tags, one per token, or ``None`` when the data has none.
        parse_bits: the constituency tree as CoNLL parse-bit column (``(S(NP*``, ``*)``), or ``None``.
        heads: 1-based dependency heads (0 = root), or ``None``.
        dep_labels: dependency labels, or ``None``.
        predicates: predicates in token order.
        source: file the sentence came from; ``line``: 1-based line of its first token.
        doc_id: document id where the format has one.
        upos: universal POS tags (CoNLL-U's UPOS column) when the data has them beside ``pos``, else
            ``None``.
        word_lines: 1-based line of each word where they are not the consecutive lines from ``line`` (CoNLL-U
            skips range and empty-node lines); ``None`` otherwise. Not part of equality.
    """

    words: list[str]
    pos: Optional[list[str]] = None
    parse_bits: Optional[list[str]] = None
    heads: Optional[list[int]] = None
    dep_labels: Optional[list[str]] = None
    predicates: list[Predicate] = dataclasses.field(default_factory=list)
    source: Optional[str] = None
    line: Optional[int] = None
    doc_id: Optional[str] = None
    upos: Optional[list[str]] = None
    word_lines: Optional[list[int]] = dataclasses.field(default=None, compare=False, repr=False)

    def __len__(self) -> int:
        return len(self.words)

    @property
    def predicate_positions(self) -> list[int]:
        return [p.position for p in self.predicates]

    def num_arguments(self) -> int:
        """Arguments as srl-eval counts them: spans other than ``V``/``C-V``, ``C-X`` merged into X."""
        count = 0
        for predicate in self.predicates:
            seen: set[str] = set()
            for span in predicate.arguments:
                base = span.label[2:] if span.label.startswith("C-") else span.label
                if base == "V":
                    continue
                # A C-X piece extends an earlier X; without one it is a plain X (srl-eval.pl).
                if not (span.label.startswith("C-") and base in seen):
                    count += 1
                seen.add(base)
        return count

    def where(self) -> str:
        """``file:line`` of the sentence, for error messages."""
        return f"{self.source or '<input>'}:{self.line if self.line is not None else '?'}"

    def word_line(self, index: int) -> Optional[int]:
        """1-based line of word ``index`` (0-based), ``None`` when the sentence has no line."""
        if self.word_lines is not None:
            return self.word_lines[index]
        return None if self.line is None else self.line + index
