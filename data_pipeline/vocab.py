"""Vocabularies of words and labels, built from training sentences only and saved beside a run.

A :class:`Vocabularies` object holds one :class:`Vocabulary` per kind of entry:

============================ ===================== ==============================================
name (file ``<name>.txt``)    entries               fixed indices
============================ ===================== ==============================================
``words``                     lower-cased words      0 = padding ``""``, 1 = out-of-vocabulary
                              (GloVe is lower-case)  ``"<unk>"``; every unknown word maps to 1
``srl``                       BIO role tags          0 = ``"O"``; then ``B-X``/``I-X`` sorted
``pos``                       gold POS tags          sorted, no reserved entry
``joint_pos_predicate``       LISA's joint labels    sorted: every POS tag plus ``TAG:PREDICATE`` for
                                                     each tag seen on a predicate (Strubell 2018 §2.3)
``dep_labels``                dependency labels      sorted, no reserved entry
``upos``                      universal POS tags     sorted, no reserved entry (CoNLL-U data only;
                                                     a directory saved without ``upos.txt`` loads
                                                     it empty)
``senses``                    predicate rolesets     sorted, no reserved entry (data with a sense
                              (``kill.01``)          column only, ``Predicate.roleset``; a
                                                     directory saved without ``senses.txt`` loads
                                                     it empty)
============================ ===================== ==============================================

Label vocabularies have no padding entry: padded positions carry index 0 and are masked (see
:mod:`data_pipeline.dataset`). Looking up a label that training never saw raises
:class:`UnknownLabelError` naming the vocabulary and the label; only ``words`` has an OOV entry.
A training word that is literally ``"<unk>"`` is the OOV entry.

BIO tags come from each predicate's spans (:func:`predicate_bio_tags`). Nested or overlapping spans
(which BIO cannot express) are not silently lost: the inner spans are left out of the tags, counted
in :class:`BioReport` and listed with their sentence's ``file:line``.

Saved form: a directory with one UTF-8 text file per vocabulary, one entry per line (so the word
file starts with an empty line, the padding entry), plus ``vocab_info.json`` with the build settings
and counts.
"""

from __future__ import annotations

import collections
import dataclasses
import json
import os
import pathlib
from typing import Iterable, Optional, Sequence

from data_pipeline.errors import DataFormatError
from data_pipeline.sentence import Predicate, Sentence, Span
from data_pipeline.spans import OUTSIDE, overlapping_spans, spans_to_bio

PAD = ""
OOV = "<unk>"
PAD_ID = 0
OOV_ID = 1
PREDICATE_SUFFIX = ":PREDICATE"
VOCABULARY_NAMES = ("words", "srl", "pos", "joint_pos_predicate", "dep_labels", "upos", "senses")
#: Vocabularies a saved directory may lack (written before they existed): loaded empty.
OPTIONAL_VOCABULARIES = ("upos", "senses")
INFO_FILE = "vocab_info.json"


class UnknownLabelError(KeyError):
    """A label that is not in a vocabulary (label vocabularies have no OOV entry)."""

    def __init__(self, vocabulary: str, label: str, size: int):
        self.vocabulary = vocabulary
        self.label = label
        super().__init__(
            f"label {label!r} is not in the {vocabulary!r} vocabulary ({size} entries built from the training data)"
        )

    def __str__(self) -> str:  # KeyError would show the message quoted
        return self.args[0]


class Vocabulary:
    """An ordered list of entries and their indices.

    Args:
        name: used in error messages and as the file name (``<name>.txt``).
        entries: the entries in index order; must be distinct and contain no newline.
        oov_id: index that unknown entries map to, or ``None`` to raise :class:`UnknownLabelError`.
    """

    def __init__(self, name: str, entries: Sequence[str], oov_id: Optional[int] = None):
        self.name = name
        self.entries = list(entries)
        self.oov_id = oov_id
        self._index: dict[str, int] = {}
        for i, entry in enumerate(self.entries):
            if "\n" in entry or "\r" in entry:
                raise ValueError(f"{name} entry {entry!r} contains a line break; cannot be saved one per line")
            if entry in self._index:
                raise ValueError(f"{name} entry {entry!r} appears twice (indices {self._index[entry]} and {i})")
            self._index[entry] = i
        if oov_id is not None and not 0 <= oov_id < len(self.entries):
            raise ValueError(f"{name}: OOV index {oov_id} outside 0..{len(self.entries) - 1}")

    def __len__(self) -> int:
        return len(self.entries)

    def __contains__(self, entry: str) -> bool:
        return entry in self._index

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Vocabulary)
            and (self.name, self.entries, self.oov_id) == (other.name, other.entries, other.oov_id)
        )

    def __repr__(self) -> str:
        return f"Vocabulary({self.name!r}, {len(self)} entries, oov_id={self.oov_id})"

    def lookup(self, entry: str) -> int:
        """Index of ``entry``; unknown entries give ``oov_id`` or raise :class:`UnknownLabelError`."""
        index = self._index.get(entry)
        if index is not None:
            return index
        if self.oov_id is not None:
            return self.oov_id
        raise UnknownLabelError(self.name, entry, len(self.entries))

    def lookup_all(self, entries: Iterable[str]) -> list[int]:
        """:meth:`lookup` for each entry."""
        return [self.lookup(e) for e in entries]

    def entry(self, index: int) -> str:
        """The entry at ``index`` (raises ``IndexError`` naming the vocabulary when out of range)."""
        if not 0 <= index < len(self.entries):
            raise IndexError(f"index {index} outside the {self.name!r} vocabulary (0..{len(self.entries) - 1})")
        return self.entries[index]

    def save(self, path: str | os.PathLike) -> None:
        """Write the entries, one per line, UTF-8."""
        with open(path, "w", encoding="utf-8", newline="\n") as handle:
            handle.write("".join(f"{e}\n" for e in self.entries))

    @classmethod
    def load(cls, path: str | os.PathLike, name: str, oov_id: Optional[int] = None) -> "Vocabulary":
        """Read a file written by :meth:`save`.

        Raises:
            DataFormatError: the file is missing, not UTF-8, or repeats an entry (names the line).
        """
        path = os.fspath(path)
        try:
            raw = pathlib.Path(path).read_bytes()
        except OSError as error:
            raise DataFormatError(path, None, f"cannot read vocabulary file: {error.strerror}") from error
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            line = raw[: error.start].count(b"\n") + 1
            raise DataFormatError(path, line, "expected UTF-8 text") from error
        if text and not text.endswith("\n"):
            raise DataFormatError(path, text.count("\n") + 1, "expected one entry per line ending in a newline")
        entries = text.split("\n")[:-1]
        seen: dict[str, int] = {}
        for number, entry in enumerate(entries, start=1):
            if entry in seen:
                raise DataFormatError(path, number, f"entry {entry!r} already on line {seen[entry]}")
            seen[entry] = number
        return cls(name, entries, oov_id=oov_id)


@dataclasses.dataclass
class BioReport:
    """What converting predicates' spans to BIO tags left out.

    Attributes:
        predicates: predicates converted.
        spans: spans seen (including ``V``).
        nested_spans: spans left out because they lie (partly) inside a longer span of the same
            predicate; BIO tags cannot express them.
        examples: up to 20 ``"file:line predicate@pos span"`` strings, to find them in the data.
    """

    predicates: int = 0
    spans: int = 0
    nested_spans: int = 0
    examples: list[str] = dataclasses.field(default_factory=list)

    def add(self, sentence: Sentence, predicate: Predicate, dropped: Sequence[Span]) -> None:
        """Count one converted predicate and the spans it left out."""
        self.predicates += 1
        self.spans += len(predicate.arguments)
        self.nested_spans += len(dropped)
        for span in dropped:
            if len(self.examples) < 20:
                self.examples.append(
                    f"{sentence.where()} predicate {predicate.lemma!r}@{predicate.position} "
                    f"{span.label} {span.start}-{span.end}"
                )

    def as_dict(self) -> dict:
        """Plain dict for JSON reports."""
        return dataclasses.asdict(self)


def predicate_bio_tags(predicate: Predicate, length: int) -> tuple[list[str], list[Span]]:
    """BIO tags of one predicate's arguments, and the nested spans BIO cannot express.

    The outermost spans are tagged; a span lying (partly) inside an earlier, longer span is left out
    and returned so the caller can count it (:class:`BioReport`).

    Returns:
        ``(tags, dropped)``: ``length`` tags ``B-X``/``I-X``/``O`` and the spans left out.
    """
    dropped = overlapping_spans(predicate.arguments)
    kept = list(predicate.arguments)
    for span in dropped:  # remove one occurrence each: a repeated identical span keeps one copy
        kept.remove(span)
    return spans_to_bio(kept, length), dropped


def joint_pos_predicate_labels(sentence: Sentence) -> list[str]:
    """LISA's joint label per token: ``TAG:PREDICATE`` at predicates, ``TAG`` elsewhere (needs POS)."""
    if sentence.pos is None:
        raise ValueError(f"{sentence.where()}: sentence has no POS tags; the joint POS/predicate label needs them")
    predicates = set(sentence.predicate_positions)
    return [f"{tag}{PREDICATE_SUFFIX}" if i in predicates else tag for i, tag in enumerate(sentence.pos)]


def normalise_word(word: str) -> str:
    """The word-vocabulary key of a token: lower-cased, as GloVe 6B is."""
    return word.lower()


@dataclasses.dataclass
class Vocabularies:
    """All vocabularies of a run (see the module docstring for each one's layout).

    Attributes:
        words, srl, pos, joint_pos_predicate, dep_labels, upos, senses: the vocabularies; a label
            vocabulary is empty when the training data has no such annotation (e.g. no dependency
            labels, no sense column).
        info: build settings and counts (``min_count``, ``sentences``, ``word_types``,
            ``words_below_min_count``, ``bio`` — a :class:`BioReport` dict); saved as JSON.
    """

    words: Vocabulary
    srl: Vocabulary
    pos: Vocabulary
    joint_pos_predicate: Vocabulary
    dep_labels: Vocabulary
    info: dict = dataclasses.field(default_factory=dict)
    upos: Vocabulary = dataclasses.field(default_factory=lambda: Vocabulary("upos", []))
    senses: Vocabulary = dataclasses.field(default_factory=lambda: Vocabulary("senses", []))

    @classmethod
    def build(cls, sentences: Iterable[Sentence], min_count: int = 1) -> "Vocabularies":
        """Build every vocabulary from training sentences.

        Args:
            sentences: the training split only (dev/test words must stay out, or OOV rates lie).
            min_count: words seen fewer times (after lower-casing) map to OOV; how many word types
                that drops is in ``info["words_below_min_count"]``.
        """
        if min_count < 1:
            raise ValueError(f"min_count must be >= 1, found {min_count}")
        word_counts: collections.Counter[str] = collections.Counter()
        srl_tags: set[str] = set()
        pos_tags: set[str] = set()
        joint: set[str] = set()
        dep_labels: set[str] = set()
        upos: set[str] = set()
        senses: set[str] = set()
        bio = BioReport()
        n_sentences = longest = longest_token = 0
        for sentence in sentences:
            n_sentences += 1
            longest = max(longest, len(sentence))
            longest_token = max(longest_token, max(map(len, sentence.words), default=0))
            word_counts.update(normalise_word(w) for w in sentence.words)
            for predicate in sentence.predicates:
                tags, dropped = predicate_bio_tags(predicate, len(sentence))
                bio.add(sentence, predicate, dropped)
                srl_tags.update(tags)
                if predicate.roleset is not None:
                    senses.add(predicate.roleset)
            if sentence.pos is not None:
                pos_tags.update(sentence.pos)
                joint.update(joint_pos_predicate_labels(sentence))
            if sentence.dep_labels is not None:
                dep_labels.update(sentence.dep_labels)
            if sentence.upos is not None:
                upos.update(sentence.upos)
        kept_words = sorted(
            (w for w, c in word_counts.items() if c >= min_count and w not in (PAD, OOV)),
            key=lambda w: (-word_counts[w], w),
        )
        below = sum(1 for w, c in word_counts.items() if c < min_count and w not in (PAD, OOV))
        srl_tags.discard(OUTSIDE)
        # Plain POS tags are always in the joint label space, even those never seen on a predicate.
        joint.update(pos_tags)
        info = {
            "min_count": min_count,
            "sentences": n_sentences,
            "longest_sentence": longest,
            "longest_token": longest_token,
            "word_types": len(word_counts),
            "words_below_min_count": below,
            "bio": bio.as_dict(),
        }
        return cls(
            words=Vocabulary("words", [PAD, OOV] + kept_words, oov_id=OOV_ID),
            srl=Vocabulary("srl", [OUTSIDE] + sorted(srl_tags, key=_bio_sort_key)),
            pos=Vocabulary("pos", sorted(pos_tags)),
            joint_pos_predicate=Vocabulary("joint_pos_predicate", sorted(joint)),
            dep_labels=Vocabulary("dep_labels", sorted(dep_labels)),
            info=info,
            upos=Vocabulary("upos", sorted(upos)),
            senses=Vocabulary("senses", sorted(senses)),
        )

    def extended(self, other: "Vocabularies") -> "Vocabularies":
        """These vocabularies grown by the entries of ``other`` they lack (a model's, adapted to new
        data): every old entry keeps its index, new ones follow in ``other``'s order, so an old
        model's embedding and output rows stay where they were."""
        grown = {}
        for name in VOCABULARY_NAMES:
            mine, theirs = getattr(self, name), getattr(other, name)
            known = set(mine.entries)
            grown[name] = Vocabulary(name, list(mine.entries) + [e for e in theirs.entries if e not in known],
                                     oov_id=mine.oov_id)
        longest = {key: max(self.info.get(key, 0), other.info.get(key, 0)) for key in ("longest_sentence", "longest_token")}
        longest = {key: value for key, value in longest.items() if value}  # a record without the key stays without
        info = dict(other.info, **longest, extends={name: len(getattr(self, name)) for name in VOCABULARY_NAMES})
        return Vocabularies(info=info, **grown)

    def word_id(self, word: str) -> int:
        """Index of a raw token (lower-cased first; unknown words give ``OOV_ID``)."""
        return self.words.lookup(normalise_word(word))

    def save(self, directory: str | os.PathLike) -> None:
        """Write ``<name>.txt`` for each vocabulary and ``vocab_info.json`` into ``directory``."""
        directory = pathlib.Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        for name in VOCABULARY_NAMES:
            getattr(self, name).save(directory / f"{name}.txt")
        (directory / INFO_FILE).write_text(json.dumps(self.info, indent=2, sort_keys=True) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, directory: str | os.PathLike) -> "Vocabularies":
        """Read a directory written by :meth:`save`.

        Raises:
            DataFormatError: a file is missing or malformed, or the word file does not start with
                the padding and OOV entries.
        """
        directory = pathlib.Path(directory)
        loaded = {}
        for name in VOCABULARY_NAMES:
            if name in OPTIONAL_VOCABULARIES and not (directory / f"{name}.txt").exists():
                loaded[name] = Vocabulary(name, [])
                continue
            loaded[name] = Vocabulary.load(directory / f"{name}.txt", name, oov_id=OOV_ID if name == "words" else None)
        words = loaded["words"].entries
        if words[:2] != [PAD, OOV]:
            raise DataFormatError(
                directory / "words.txt", 1, f"expected the padding entry {PAD!r} then {OOV!r} on lines 1-2, found {words[:2]!r}"
            )
        if len(loaded["srl"]) and loaded["srl"].entries[0] != OUTSIDE:
            raise DataFormatError(directory / "srl.txt", 1, f"expected {OUTSIDE!r} first, found {loaded['srl'].entries[0]!r}")
        info_path = directory / INFO_FILE
        info = {}
        if info_path.exists():
            try:
                info = json.loads(info_path.read_text(encoding="utf-8"))
            except ValueError as error:
                raise DataFormatError(info_path, None, f"expected JSON: {error}") from error
        return cls(info=info, **loaded)


def _bio_sort_key(tag: str) -> tuple[str, str]:
    # Group B-X and I-X of one role together: (role, prefix).
    prefix, _, role = tag.partition("-")
    return role, prefix
