"""Reader for CoNLL-U dependency files, and attaching their trees to SRL sentences.

CoNLL-U has 10 tab-separated columns: ``ID FORM LEMMA UPOS XPOS FEATS HEAD DEPREL DEPS MISC``; comment
lines start with ``#``; a blank line ends a sentence. Only syntactic words are tokens: multiword-token
range lines (``3-4  don't``) and empty nodes of enhanced graphs (``8.1``) are skipped and counted in
:class:`ConlluCounts`, because the SRL corpora (PropBank, CoNLL-2005/2012) tokenise into the syntactic
words and have no empty nodes.

POS choice: :attr:`Sentence.pos` is the language-specific **XPOS** column (PTB tags for English, the tag
set of the SRL corpora and of LISA's POS supervision). A sentence whose XPOS is ``_`` on every token
falls back to UPOS; a sentence with neither is read with ``pos=None``. The UPOS column is also kept as
:attr:`Sentence.upos` (``None`` when it is ``_`` on some token), for a parser that tags both.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
from typing import Iterator, Optional, Sequence

from data_pipeline.column_file import Block, dependency_labels, natural_number, read_blocks
from data_pipeline.errors import DataFormatError
from data_pipeline.sentence import Sentence

N_COLUMNS = 10
_ID, _FORM, _UPOS, _XPOS, _HEAD, _DEPREL = 0, 1, 3, 4, 6, 7
_MISSING = "_"


@dataclasses.dataclass
class ConlluCounts:
    """What a CoNLL-U read saw and skipped.

    Attributes:
        sentences: sentences read; ``tokens``: syntactic words kept.
        ranges: multiword-token range lines (``n-m``) skipped.
        empty_nodes: empty-node lines (``n.k``) skipped.
        upos_fallback: sentences whose ``pos`` is UPOS because XPOS was ``_`` throughout.
    """

    sentences: int = 0
    tokens: int = 0
    ranges: int = 0
    empty_nodes: int = 0
    upos_fallback: int = 0


def read_conllu(path: str | os.PathLike, counts: Optional[ConlluCounts] = None, limit: int = 0) -> list[Sentence]:
    """Read a CoNLL-U file (plain or gzip) into sentences with words, POS, heads and dependency labels.

    Args:
        path: the file.
        counts: if given, incremented with the sentences, tokens and skipped lines of this file.
        limit: > 0 reads only the first ``limit`` sentences (the rest of the file is not read).

    Returns:
        One :class:`Sentence` per CoNLL-U sentence, ``heads`` 1-based (0 = root), no predicates.

    Raises:
        DataFormatError: a line without exactly 10 tab-separated columns, word ids not 1, 2, 3, …, a
            HEAD that is not a token of the sentence, a sentence with heads on some tokens only.
    """
    return [sentence for _, sentence in itertools.islice(conllu_blocks(path, counts), limit or None)]


def conllu_blocks(path: str | os.PathLike, counts: Optional[ConlluCounts] = None) -> Iterator[tuple[Block, Sentence]]:
    """Each CoNLL-U sentence as its raw :class:`Block` (rows and comments, to copy verbatim) and its :class:`Sentence`."""
    counts = ConlluCounts() if counts is None else counts
    for block in read_blocks(path, comment_prefix="#", separator="\t"):
        yield block, _sentence(block, counts)


def _sentence(block: Block, counts: ConlluCounts) -> Sentence:
    tokens = []
    for i, row in enumerate(block.rows):
        line = block.line_of(i)
        if len(row) != N_COLUMNS:
            raise DataFormatError(
                block.path, line, f"expected {N_COLUMNS} tab-separated CoNLL-U columns, found {len(row)}"
            )
        word_id = row[_ID]
        if "-" in word_id:
            counts.ranges += 1
            continue
        if "." in word_id:
            counts.empty_nodes += 1
            continue
        if word_id != str(len(tokens) + 1):
            raise DataFormatError(block.path, line, f"expected word id {len(tokens) + 1}, found {word_id!r}")
        tokens.append((line, row))
    if not tokens:
        raise DataFormatError(block.path, block.first_line, "expected at least one word line in the sentence, found none")
    n = len(tokens)
    heads: Optional[list[int]] = []
    head_cells = [row[_HEAD] for _, row in tokens]
    if all(cell == _MISSING for cell in head_cells):
        heads = None
    else:
        for line, row in tokens:
            head = natural_number(row[_HEAD])
            if head is None or head > n:
                raise DataFormatError(block.path, line, f"expected a HEAD between 0 and {n}, found {row[_HEAD]!r}")
            heads.append(head)
    counts.sentences += 1
    counts.tokens += n
    return Sentence(
        words=[row[_FORM] for _, row in tokens],
        pos=_pos([row for _, row in tokens], counts),
        upos=_column([row for _, row in tokens], _UPOS),
        heads=heads,
        dep_labels=None if heads is None else dependency_labels([row[_DEPREL] for _, row in tokens]),
        source=block.path,
        line=block.first_line,
        word_lines=[line for line, _ in tokens],
    )


def _column(rows: Sequence[list[str]], column: int) -> Optional[list[str]]:
    """The column's tags, or ``None`` when some token has ``_``."""
    tags = [row[column] for row in rows]
    return tags if all(tag != _MISSING for tag in tags) else None


def _pos(rows: Sequence[list[str]], counts: ConlluCounts) -> Optional[list[str]]:
    for column in (_XPOS, _UPOS):
        tags = _column(rows, column)
        if tags is not None:
            if column == _UPOS:
                counts.upos_fallback += 1
            return tags
    return None


#: Masked words of PropBank skeletons (``.gold_skel``): they match any word of a parse.
MASKED_WORD = "[WORD]"
# Penn Treebank spellings of brackets and quotes, and what a parse of the raw text may write instead.
_PTB_SPELLING = {"-LRB-": "(", "-RRB-": ")", "-LCB-": "{", "-RCB-": "}", "-LSB-": "[", "-RSB-": "]",
                 "``": '"', "''": '"', "\u201c": '"', "\u201d": '"', "`": "'", "\u2018": "'", "\u2019": "'"}


def _plain(word: str) -> str:
    """A word with PTB bracket and quote tokens and the ``\\/`` and ``\\*`` escapes of PTB text spelled plainly."""
    word = _PTB_SPELLING.get(word.upper(), word)
    return word.replace("\\/", "/").replace("\\*", "*")


def same_word(data_word: str, parse_word: str) -> bool:
    """Whether a parse word is the data word: equal once PTB spellings are undone, or the data word is masked."""
    return data_word == parse_word or data_word == MASKED_WORD or _plain(data_word) == _plain(parse_word)


def attach_parse(
    sentences: Sequence[Sentence], parse_sentences: Sequence[Sentence], path: str | os.PathLike
) -> list[Sentence]:
    """Copies of ``sentences`` carrying the heads and labels of ``parse_sentences`` (read from ``path``).

    The two lists are paired in order; words and POS of the SRL sentences are kept. Each pair must have the same
    words (:func:`same_word`: PTB ``-LRB-`` matches ``(`` and PTB quotes match ``"``; a masked ``[WORD]`` matches any).

    Raises:
        DataFormatError: the files have different numbers of sentences, or a pair has different token counts
            (naming both the SRL sentence and the parse sentence), or a different word (naming the data file:line and
            the parse file:line of the word, and both words), or a parse sentence has no heads. Trees are never
            attached to a sentence they were not made for.
    """
    path = os.fspath(path)
    if len(sentences) != len(parse_sentences):
        raise DataFormatError(
            path, None, f"expected one parse per SRL sentence: {len(sentences)} SRL sentences, {len(parse_sentences)} parses"
        )
    result = []
    for number, (sentence, parse) in enumerate(zip(sentences, parse_sentences), start=1):
        if len(sentence) != len(parse):
            raise DataFormatError(
                path,
                parse.line,
                f"sentence {number}: expected {len(sentence)} tokens as in the SRL sentence at {sentence.where()}, "
                f"found {len(parse)} in the parse",
            )
        for i, (word, parsed) in enumerate(zip(sentence.words, parse.words)):
            if not same_word(word, parsed):
                raise DataFormatError(
                    path,
                    parse.word_line(i),
                    f"sentence {number}, word {i + 1}: expected {word!r} as in the data at "
                    f"{sentence.source or '<input>'}:{sentence.word_line(i) or '?'}, found {parsed!r} in the parse "
                    "(a parse of other sentences, or of another tokenisation)",
                )
        if parse.heads is None:
            raise DataFormatError(path, parse.line, f"sentence {number}: expected dependency heads, found '_'")
        result.append(dataclasses.replace(sentence, heads=list(parse.heads), dep_labels=list(parse.dep_labels)))
    return result
