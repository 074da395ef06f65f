"""A pure-Python scorer that reproduces the CoNLL-2005 ``srl-eval.pl GOLD PRED`` (Carreras & Marquez).

Semantics (the official script's, reproduced decision by decision so the counts agree exactly):

* Gold and predicted props are read in parallel, one sentence per block of lines; column 0 holds the
  target verb (or ``-``) and the k-th target owns the k-th argument column. Sentence lengths must agree
  (the script dies otherwise; here :class:`~lisa_tf.evaluation.EvaluationInputError`).
* Bracket columns are parsed by :func:`data_pipeline.spans.brackets_to_spans` (malformed brackets raise
  :class:`~data_pipeline.errors.DataFormatError` naming the file and line). Phrases are visited by start,
  longer first; a ``C-X`` phrase is attached to the most recent ``X`` argument, which becomes a
  discontinuous argument (its pieces: the head phrase plus every continuation); a ``C-X`` with no earlier
  ``X`` becomes a plain ``X``. ``R-X`` is a type of its own. A phrase nested inside another one is an
  argument too, and (as in the script) it makes its parent count as "not single".
* Per proposition, a predicted argument is looked up by its (start, end): it is **correct** when the gold
  argument there has the same type and, for discontinuous arguments, the same set of pieces; otherwise it
  is **excess**. Gold arguments left unmatched are **missed**. Type ``V`` (with ``C-V`` merged into it) is
  excluded from the scores and reported on its own line.
* Props align by token position up to the last gold target: a gold prop without a predicted prop, or
  whose verb differs, has all its arguments missed; a predicted prop without a gold prop is ignored. The
  single run therefore never penalises spurious predicted predicates; :func:`evaluate_swap` adds the
  end-to-end convention of He et al. (2017): precision is the *recall* of the run with the files swapped
  (every predicted argument, of every predicted prop, over all predicted arguments), recall is the normal
  run's recall, F1 is computed from those two.
* P = 100·corr/(corr+excess), R = 100·corr/(corr+missed), F1 = 2PR/(P+R); 0 when a denominator is 0.
  A proposition is perfect when it has no excess and no missed argument (``V`` not counted).

The text report has the script's layout: three header lines, a blank line, the column header, a
60-dash rule, the ``Overall`` line, a 10-dash rule, one line per type sorted by name, a rule, the
excluded types (``V``) and a final rule; widths are those of the script's ``printf`` formats
(``%10s   %6d  %6d  %6d   %6.2f  %6.2f  %6.2f``).

Warnings go to a callable (stderr by default) with the script's wording and its 0-based sentence
numbers. A ``C-X`` without its ``X`` is converted silently, as by the 2005 script, but counted
(``orphan_continuations``) and described in ``result.notes``. Differences from the script, all on inputs
the CoNLL files never contain, and all reported: a predicted prop beyond the last gold target is warned
about (the script skips it silently); argument columns beyond the targets and predicted sentences beyond
the end of the gold file are warned about and counted (the script ignores them silently); rows with differing
numbers of columns are an error; runs of blank lines separate sentences like a single one (the script
would stop reading at the second blank line); two identical nested spans (``(A0(A1*`` … ``*))``) are
ordered by label because :func:`~data_pipeline.spans.brackets_to_spans` returns sorted spans.

Example::

    result = evaluate("test.wsj.props.gz", "predicted.props")
    print(result.report())           # same text as srl-eval.pl
    result.f1, result.per_type["A0"].recall
"""

from __future__ import annotations

import dataclasses
import os
import sys
from typing import Callable, Iterable, Iterator, Optional, Sequence, Union

from data_pipeline.column_file import Block, read_blocks, sentence_width
from data_pipeline.sentence import Sentence, Span
from data_pipeline.spans import brackets_to_spans

from lisa_tf.evaluation import EvaluationInputError

EXCLUDED_TYPES = frozenset({"V"})
"""Argument types reported on their own and left out of the scores (the script's ``%excluded``)."""

NO_TARGET = "-"

Warn = Optional[Callable[[str], None]]
Source = Union[str, "os.PathLike[str]", Sequence[Sentence]]


def print_warning(message: str) -> None:
    """Default warning sink: the message on stderr, as the Perl script prints it."""
    print(message, file=sys.stderr)


def prec_rec_f1(correct: int, excess: int, missed: int) -> tuple[float, float, float]:
    """Precision, recall and F1 in percent, computed exactly as the script's ``precrecf1``."""
    precision = 100 * correct / (correct + excess) if correct + excess > 0 else 0.0
    recall = 100 * correct / (correct + missed) if correct + missed > 0 else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return precision, recall, f1


@dataclasses.dataclass
class Counts:
    """Correct / excess / missed arguments, with P, R, F1 in percent."""

    correct: int = 0
    excess: int = 0
    missed: int = 0

    @property
    def precision(self) -> float:
        return prec_rec_f1(self.correct, self.excess, self.missed)[0]

    @property
    def recall(self) -> float:
        return prec_rec_f1(self.correct, self.excess, self.missed)[1]

    @property
    def f1(self) -> float:
        return prec_rec_f1(self.correct, self.excess, self.missed)[2]

    def to_dict(self) -> dict:
        precision, recall, f1 = prec_rec_f1(self.correct, self.excess, self.missed)
        return {"correct": self.correct, "excess": self.excess, "missed": self.missed,
                "precision": precision, "recall": recall, "f1": f1}


def _line(name: str, counts: Counts) -> str:
    precision, recall, f1 = prec_rec_f1(counts.correct, counts.excess, counts.missed)
    return (f"{name:>10}   {counts.correct:6d}  {counts.excess:6d}  {counts.missed:6d}"
            f"   {precision:6.2f}  {recall:6.2f}  {f1:6.2f}")


_RULE = "-" * 60


@dataclasses.dataclass
class SrlEvalResult:
    """Everything one ``srl-eval.pl GOLD PRED`` run computes, plus what it skipped.

    Attributes:
        sentences: gold sentences read (``Number of Sentences``).
        propositions: gold propositions scored (``Number of Propositions``).
        perfect_propositions: propositions with no excess and no missed argument.
        overall: counts over all types but the excluded ones.
        per_type: counts per argument type (``A0``, ``AM-TMP``, ``R-A0`` …), excluded types left out.
        excluded: counts of the excluded types (``V``).
        skipped_predicted_props: predicted props with no gold prop at their position (ignored).
        missing_predicted_props: gold props with no predicted prop (all arguments missed).
        verb_mismatches: gold props whose predicted prop names another verb (all arguments missed).
        orphan_continuations: ``C-X`` phrases with no earlier ``X``, scored as ``X``.
        missing_columns: targets without an argument column (scored as props without arguments).
        extra_columns: argument columns beyond the number of targets (ignored).
        ignored_predicted_sentences: predicted sentences after the last gold sentence (ignored).
        warnings: every warning message, in order (what was printed).
        notes: conversions the script makes without a warning (``C-X`` without ``X``), one per case.
    """

    sentences: int = 0
    propositions: int = 0
    perfect_propositions: int = 0
    overall: Counts = dataclasses.field(default_factory=Counts)
    per_type: dict[str, Counts] = dataclasses.field(default_factory=dict)
    excluded: dict[str, Counts] = dataclasses.field(default_factory=dict)
    skipped_predicted_props: int = 0
    missing_predicted_props: int = 0
    verb_mismatches: int = 0
    orphan_continuations: int = 0
    missing_columns: int = 0
    extra_columns: int = 0
    ignored_predicted_sentences: int = 0
    warnings: list[str] = dataclasses.field(default_factory=list)
    notes: list[str] = dataclasses.field(default_factory=list)

    @property
    def precision(self) -> float:
        return self.overall.precision

    @property
    def recall(self) -> float:
        return self.overall.recall

    @property
    def f1(self) -> float:
        return self.overall.f1

    @property
    def perfect_percentage(self) -> float:
        """``Percentage of perfect props``: 100 · perfect / propositions (0 without propositions)."""
        return 100 * self.perfect_propositions / self.propositions if self.propositions > 0 else 0.0

    def report(self) -> str:
        """The text ``srl-eval.pl`` prints on stdout (without ``-latex`` or ``-C``), newline-terminated."""
        lines = [
            f"Number of Sentences    :      {self.sentences:6d}",
            f"Number of Propositions :      {self.propositions:6d}",
            f"Percentage of perfect props : {self.perfect_percentage:6.2f}",
            "",
            f"{'':>10}   {'corr.':>6}  {'excess':>6}  {'missed':>6}   {'prec.':>6}  {'rec.':>6}  {'F1':>6}",
            _RULE,
            _line("Overall", self.overall),
            "-" * 10,
        ]
        lines += [_line(name, self.per_type[name]) for name in sorted(self.per_type)]
        lines.append(_RULE)
        lines += [_line(name, self.excluded[name]) for name in sorted(self.excluded)]
        lines.append(_RULE)
        return "\n".join(lines) + "\n"

    def to_dict(self) -> dict:
        """JSON-ready summary: header numbers, overall and per-type counts, skip counters."""
        return {
            "sentences": self.sentences,
            "propositions": self.propositions,
            "perfect_propositions": self.perfect_propositions,
            "perfect_percentage": self.perfect_percentage,
            "overall": self.overall.to_dict(),
            "per_type": {name: counts.to_dict() for name, counts in sorted(self.per_type.items())},
            "excluded": {name: counts.to_dict() for name, counts in sorted(self.excluded.items())},
            "skipped_predicted_props": self.skipped_predicted_props,
            "missing_predicted_props": self.missing_predicted_props,
            "verb_mismatches": self.verb_mismatches,
            "orphan_continuations": self.orphan_continuations,
            "missing_columns": self.missing_columns,
            "extra_columns": self.extra_columns,
            "ignored_predicted_sentences": self.ignored_predicted_sentences,
            "warnings": len(self.warnings),
        }


@dataclasses.dataclass
class SwapResult:
    """The end-to-end convention of He et al. (2017): two runs, P from the swapped one.

    Attributes:
        normal: ``srl-eval.pl GOLD PRED`` (gives recall; spurious predicted props ignored).
        swapped: ``srl-eval.pl PRED GOLD``; its recall is the system's precision over every predicted
            argument, including those of predicted props that have no gold prop.
    """

    normal: SrlEvalResult
    swapped: SrlEvalResult

    @property
    def precision(self) -> float:
        return self.swapped.recall

    @property
    def recall(self) -> float:
        return self.normal.recall

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r > 0 else 0.0

    def report(self) -> str:
        """The normal run's report, then the swapped run's, then the end-to-end P / R / F1 line."""
        return (
            self.normal.report()
            + "\nSwapped run (gold and predicted files exchanged; its rec. is the end-to-end precision):\n"
            + self.swapped.report()
            + "\n"
            + f"{'':>10}   {'prec.':>6}  {'rec.':>6}  {'F1':>6}\n"
            + f"{'Swap':>10}   {self.precision:6.2f}  {self.recall:6.2f}  {self.f1:6.2f}\n"
        )

    def to_dict(self) -> dict:
        return {"precision": self.precision, "recall": self.recall, "f1": self.f1,
                "normal": self.normal.to_dict(), "swapped": self.swapped.to_dict()}


# --------------------------------------------------------------------------------------------------
# Propositions and arguments, built the way the script builds them.


class _Phrase:
    """A bracketed phrase; as an argument, ``children`` are its pieces (or nested phrases)."""

    __slots__ = ("start", "end", "label", "children")

    def __init__(self, start: int, end: int, label: str):
        self.start = start
        self.end = end
        self.label = label
        self.children: list[_Phrase] = []

    def walk(self) -> Iterator["_Phrase"]:
        yield self
        for child in self.children:
            yield from child.walk()


@dataclasses.dataclass
class _Prop:
    verb: str
    position: int
    arguments: list[_Phrase]


def _arguments(spans: Iterable[Span], sink: "_Sink") -> list[_Phrase]:
    """Arguments of one proposition from its labelled spans (``C-`` merged, nesting kept)."""
    # Rebuild the bracket tree: each phrase is a child of the innermost phrase that contains it.
    top: list[_Phrase] = []
    stack: list[_Phrase] = []
    for span in sorted(spans, key=lambda s: (s.start, -s.end)):
        phrase = _Phrase(span.start, span.end, span.label)
        while stack and not (stack[-1].start <= phrase.start and phrase.end <= stack[-1].end):
            stack.pop()
        (stack[-1].children if stack else top).append(phrase)
        stack.append(phrase)
    # The script's phrase set is a (start, end) table filled depth-first: a later phrase with the
    # same extent replaces an earlier one; it is then read by start, longer phrases first.
    table: dict[tuple[int, int], _Phrase] = {}
    for root in top:
        for phrase in root.walk():
            table[(phrase.start, phrase.end)] = phrase
    arguments: list[_Phrase] = []
    latest: dict[str, _Phrase] = {}
    for key in sorted(table, key=lambda k: (k[0], -k[1])):
        phrase = table[key]
        if phrase.label.startswith("C-"):
            base = phrase.label[2:]
            head = latest.get(base)
            if head is not None:
                if not head.children:
                    head.children.append(_Phrase(head.start, head.end, base))
                head.children.append(phrase)
                head.end = phrase.end
                continue
            sink.orphan(phrase.label, base)
            phrase.label = base
        arguments.append(phrase)
        latest[phrase.label] = phrase
    return arguments


def _discriminate(gold: Sequence[_Phrase], predicted: Sequence[_Phrase]):
    """Correct, excess (predicted labels) and missed (gold labels) of one proposition."""
    by_extent = {}
    for argument in gold:
        by_extent[(argument.start, argument.end)] = argument
    correct: list[str] = []
    excess: list[str] = []
    for argument in predicted:
        key = (argument.start, argument.end)
        reference = by_extent.get(key)
        if reference is None:
            excess.append(argument.label)
            continue
        single, reference_single = not argument.children, not reference.children
        if single and reference_single:
            match = reference.label == argument.label
        elif single or reference_single:
            match = False
        else:
            match = reference.label == argument.label
            pieces = {(p.start, p.end) for p in reference.children}
            for piece in argument.children:
                if not match:
                    break
                if (piece.start, piece.end) in pieces:
                    pieces.discard((piece.start, piece.end))
                else:
                    match = False
            match = match and not pieces
        if match:
            correct.append(argument.label)
            del by_extent[key]
        else:
            excess.append(argument.label)
    missed = [argument.label for argument in by_extent.values()]
    return correct, excess, missed


# --------------------------------------------------------------------------------------------------
# Reading either side: props files or in-memory sentences.


class _Sink:
    """Collects warnings and skip counters into a result, echoing warnings to ``warn``."""

    def __init__(self, result: SrlEvalResult, warn: Warn, prefix: str = ""):
        self.result = result
        self.warn = warn
        self.prefix = prefix
        self.sentence = 0

    def __call__(self, message: str) -> None:
        message = self.prefix + message
        self.result.warnings.append(message)
        if self.warn is not None:
            self.warn(message)

    def orphan(self, label: str, base: str) -> None:
        # The CoNLL-2005 script converts these silently (its warning is commented out), so to keep
        # stderr identical this is counted and noted in the result rather than printed.
        self.result.orphan_continuations += 1
        self.result.notes.append(
            f"{self.prefix}sentence {self.sentence} : found continuation phrase \"{label}\" without heading "
            f"phrase: turned into regular {base} argument."
        )


@dataclasses.dataclass
class _PropSentence:
    """One sentence of one side: its length, where it is, and a way to build its props."""

    length: int
    path: Optional[str]
    line: Optional[int]
    build: Callable[[_Sink], list[_Prop]]


def _from_block(block: Block) -> _PropSentence:
    def build(sink: _Sink) -> list[_Prop]:
        width = sentence_width(block.rows, block.path, block.first_line)
        targets = [row[0] for row in block.rows]
        columns = [[row[k] for row in block.rows] for k in range(1, width)]
        props = []
        for position, verb in enumerate(targets):
            if verb == NO_TARGET:
                continue
            if columns:
                spans = brackets_to_spans(columns.pop(0), block.path, block.first_line)
                arguments = _arguments(spans, sink)
            else:
                sink.result.missing_columns += 1
                sink(f"WARNING : sentence {sink.sentence} : can't find column of args for prop {verb}!")
                arguments = []
            props.append(_Prop(verb, position, arguments))
        if columns:
            sink.result.extra_columns += len(columns)
            sink(f"WARNING : sentence {sink.sentence} : {len(columns)} argument column(s) beyond the "
                 f"{width - 1 - len(columns)} target(s) of {block.path}:{block.first_line}; ignored!")
        return props

    return _PropSentence(len(block.rows), block.path, block.first_line, build)


def _from_sentence(sentence: Sentence) -> _PropSentence:
    def build(sink: _Sink) -> list[_Prop]:
        positions = set()
        props = []
        for predicate in sentence.predicates:
            if predicate.position in positions or not 0 <= predicate.position < len(sentence):
                raise EvaluationInputError(
                    sentence.source, sentence.line,
                    f"expected distinct predicate positions inside the sentence's {len(sentence)} tokens, "
                    f"found position {predicate.position} twice or out of range",
                )
            positions.add(predicate.position)
            props.append(_Prop(predicate.lemma, predicate.position, _arguments(predicate.arguments, sink)))
        return props

    return _PropSentence(len(sentence), sentence.source, sentence.line, build)


def _side(source: Source) -> Iterator[_PropSentence]:
    if isinstance(source, (str, os.PathLike)):
        return (_from_block(block) for block in read_blocks(source))
    return (_from_sentence(sentence) for sentence in source)


def _name(source: Source) -> Optional[str]:
    return os.fspath(source) if isinstance(source, (str, os.PathLike)) else None


# --------------------------------------------------------------------------------------------------
# The evaluation loop.


def evaluate(gold: Source, predicted: Source, *, warn: Warn = print_warning, match_verbs: bool = True,
             _prefix: str = "") -> SrlEvalResult:
    """Score predicted propositions against gold ones, as ``srl-eval.pl GOLD PRED`` does.

    Args:
        gold, predicted: a props file (plain or gzip) or a sequence of
            :class:`~data_pipeline.sentence.Sentence` (``Predicate.lemma`` plays the target column,
            ``Predicate.arguments`` the bracket column, ``len(sentence)`` the number of rows). Files and
            sentences can be mixed.
        warn: receives each warning (default: stderr); ``None`` keeps them only in ``result.warnings``.
        match_verbs: compare the target strings as the script does; ``False`` aligns props by position
            only (for in-memory predictions that carry no lemma).

    Returns:
        :class:`SrlEvalResult`.

    Raises:
        DataFormatError: malformed brackets or ragged rows (names file and line).
        EvaluationInputError: the predicted side has fewer sentences, or a sentence of another length.
    """
    result = SrlEvalResult()
    sink = _Sink(result, warn, _prefix)
    predicted_sentences = _side(predicted)
    for number, gold_sentence in enumerate(_side(gold)):
        sink.sentence = number
        predicted_sentence = next(predicted_sentences, None)
        if predicted_sentence is None:
            raise EvaluationInputError(
                _name(predicted), None,
                f"sentence {number} : gold and pred sentences do not align correctly! The gold side has more "
                f"sentences (this one starts at {gold_sentence.path or '<input>'}:{gold_sentence.line}) than "
                f"the predicted side ({number})",
            )
        if predicted_sentence.length != gold_sentence.length:
            raise EvaluationInputError(
                predicted_sentence.path, predicted_sentence.line,
                f"sentence {number} : gold and pred sentences do not align correctly! Expected "
                f"{gold_sentence.length} rows as in {gold_sentence.path or '<input>'}:{gold_sentence.line}, "
                f"found {predicted_sentence.length}",
            )
        gold_props = {prop.position: prop for prop in gold_sentence.build(sink)}
        predicted_props = {prop.position: prop for prop in predicted_sentence.build(sink)}
        result.sentences += 1
        limit = max(gold_props) + 1 if gold_props else 0
        for position in sorted(set(gold_props) | set(predicted_props)):
            gold_prop = gold_props.get(position)
            predicted_prop = predicted_props.get(position)
            if gold_prop is None:
                result.skipped_predicted_props += 1
                where = "" if position < limit else " (after the last gold prop)"
                sink(f"WARNING : sentence {number} : verb {predicted_prop.verb} at position {position} : "
                     f"found predicted prop without its gold reference{where}! Skipping prop!")
                continue
            if predicted_prop is None:
                result.missing_predicted_props += 1
                sink(f"WARNING : sentence {number} : verb {gold_prop.verb} at position {position} : "
                     f"missing predicted prop! Counting all arguments as missed!")
                predicted_prop = _Prop(gold_prop.verb, position, [])
            elif match_verbs and gold_prop.verb != predicted_prop.verb:
                result.verb_mismatches += 1
                sink(f"WARNING : sentence {number} : props do not match : expecting {gold_prop.verb} at "
                     f"position {position}, found {predicted_prop.verb} at position {position}! Counting all "
                     f"gold arguments as missed!")
                predicted_prop = _Prop(gold_prop.verb, position, [])
            _score_proposition(result, gold_prop, predicted_prop)
    leftover = sum(1 for _ in predicted_sentences)
    if leftover:
        result.ignored_predicted_sentences = leftover
        sink(f"WARNING : the predicted side has {leftover} sentence(s) after the last gold sentence; ignored!")
    return result


def _score_proposition(result: SrlEvalResult, gold: _Prop, predicted: _Prop) -> None:
    correct, excess, missed = _discriminate(gold.arguments, predicted.arguments)
    result.propositions += 1
    scored_errors = 0
    for labels, field in ((correct, "correct"), (excess, "excess"), (missed, "missed")):
        for label in labels:
            table = result.excluded if label in EXCLUDED_TYPES else result.per_type
            counts = table.get(label)
            if counts is None:
                counts = table[label] = Counts()
            setattr(counts, field, getattr(counts, field) + 1)
            if label not in EXCLUDED_TYPES:
                setattr(result.overall, field, getattr(result.overall, field) + 1)
                if field != "correct":
                    scored_errors += 1
    if scored_errors == 0:
        result.perfect_propositions += 1


def evaluate_swap(gold: Source, predicted: Source, *, warn: Warn = print_warning,
                  match_verbs: bool = True) -> SwapResult:
    """Both runs of the end-to-end convention (He et al. 2017): ``(gold, pred)`` and ``(pred, gold)``.

    Warnings of the swapped run are prefixed ``(swapped run)``; there "gold" means the prediction.
    """
    if not isinstance(predicted, (str, os.PathLike)):
        predicted = list(predicted)
    if not isinstance(gold, (str, os.PathLike)):
        gold = list(gold)
    normal = evaluate(gold, predicted, warn=warn, match_verbs=match_verbs)
    swapped = evaluate(predicted, gold, warn=warn, match_verbs=match_verbs, _prefix="(swapped run) ")
    return SwapResult(normal, swapped)


def score(gold: Sequence[Sentence], predicted: Sequence[Sentence], swap: bool = False) -> dict:
    """SRL precision/recall/F1 of Sentences as a plain dict (warnings silenced, counts kept):
    :func:`evaluate`, or :func:`evaluate_swap` (He et al.'s end-to-end convention) with ``swap``.
    A single-run score also has ``per_role``: counts, P, R, F1 per argument type, as srl-eval's table."""
    function = evaluate_swap if swap else evaluate
    result = function(list(gold), list(predicted), warn=lambda message: None)
    scores = {"precision": result.precision, "recall": result.recall, "f1": result.f1}
    if not swap:
        scores["per_role"] = {name: counts.to_dict() for name, counts in sorted(result.per_type.items())}
    return scores

