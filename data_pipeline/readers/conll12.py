"""Reader (and writer) for the CoNLL-2012 column formats.

Two layouts are read, chosen by the file name:

``*.gold_conll`` (OntoNotes 5.0 / CoNLL-2012), whitespace-separated columns::

    0 doc-id  1 part  2 word#  3 word  4 POS  5 parse-bit  6 predicate lemma  7 frameset id
    8 word sense  9 speaker  10 named entities  11..N-2 one bracket column per predicate  N-1 coreference

with ``#begin document (...); part NNN`` and ``#end document`` lines around each document.

``*.gold_skel`` (propbank-release "unified" skeletons)::

    0 doc-id  1 sent#  2 tok#  3 word (``[WORD]``: masked)  4 POS  5 parse-bit  6 lemma  7 roleset
    8..N-1 one bracket column per predicate

A predicate is a row whose lemma *and* frameset/roleset are both given (not ``-``). In ``.gold_conll``
a row with a lemma but frameset ``-`` is a noun or verb that carries a word sense but no PropBank
frame, so it has no argument column. In the skeletons the two columns are always both ``-`` or both
set. In both layouts the number of predicate rows must equal the number of bracket columns, and the
k-th bracket column belongs to the k-th predicate row in token order.

Masked skeleton words stay ``"[WORD]"`` in :attr:`Sentence.words`;
:mod:`data_pipeline.open_corpus` fills them from the treebank the annotation was made on.
"""

from __future__ import annotations

import itertools
import os
from typing import Iterable, Iterator, Optional, Sequence

from data_pipeline.column_file import natural_number, read_blocks, sentence_width
from data_pipeline.errors import DataFormatError
from data_pipeline.sentence import Predicate, Sentence
from data_pipeline.spans import predicate_spans, spans_to_brackets

GOLD_CONLL = "gold_conll"
GOLD_SKEL = "gold_skel"

# Columns before the first bracket column, and columns after the last one.
_LEADING = {GOLD_CONLL: 11, GOLD_SKEL: 8}
_TRAILING = {GOLD_CONLL: 1, GOLD_SKEL: 0}
_NONE = "-"
_SUFFIXES = {f".{GOLD_CONLL}": GOLD_CONLL, f".{GOLD_SKEL}": GOLD_SKEL}


def conll12_format(path: str | os.PathLike) -> Optional[str]:
    """``"gold_conll"`` or ``"gold_skel"`` from a file name (``.gz`` allowed), ``None`` for other files."""
    name = os.path.basename(os.fspath(path))
    if name.endswith(".gz"):
        name = name[: -len(".gz")]
    for suffix, kind in _SUFFIXES.items():
        if name.endswith(suffix):
            return kind
    return None


def conll12_files(path: str | os.PathLike) -> list[str]:
    """The ``.gold_conll``/``.gold_skel`` files of ``path``: the file itself, or a directory's, recursively and sorted.

    Raises:
        DataFormatError: ``path`` does not exist, is a file with another name, or is a directory without such files.
    """
    path = os.fspath(path)
    if os.path.isfile(path):
        if conll12_format(path) is None:
            raise DataFormatError(
                path, None, "expected a file named *.gold_conll or *.gold_skel (optionally .gz) to tell the layout"
            )
        return [path]
    if not os.path.isdir(path):
        raise DataFormatError(path, None, "no such file or directory")
    found = []
    for root, dirs, files in os.walk(path):
        dirs.sort()
        for name in files:
            if conll12_format(name) is not None:
                found.append(os.path.join(root, name))
    if not found:
        raise DataFormatError(path, None, "expected *.gold_conll or *.gold_skel files in this directory, found none")
    return sorted(found)


def read_conll12(path: str | os.PathLike, limit: int = 0) -> list[Sentence]:
    """Read a ``.gold_conll`` / ``.gold_skel`` file (plain or gzip), or every such file under a directory.

    Args:
        path: a file, whose name decides the layout, or a directory read recursively in sorted path order.
        limit: > 0 reads only the first ``limit`` sentences (the rest of the data is not read).

    Returns:
        Sentences with words, POS, parse bits, predicates (lemma, sense = frameset or roleset id, argument
        spans including ``V``), ``doc_id``, ``source`` and ``line``.

    Raises:
        DataFormatError: wrong or ragged column count, a number of predicate rows different from the number of
            bracket columns, unbalanced brackets, a second ``(V*)`` in a column, a document marker or doc id out of place, non-UTF-8 bytes.
    """
    sentences = (sentence for file_path in conll12_files(path)
                 for sentence in _read_file(file_path, conll12_format(file_path)))
    return list(itertools.islice(sentences, limit or None))


def _read_file(path: str, kind: str) -> Iterator[Sentence]:
    # Document markers are read as rows (not comments): OntoNotes-derived files sometimes put
    # '#end document' right after the last token line, with no blank line in between.
    for block in read_blocks(path):
        start = 0
        for i, row in enumerate(block.rows + [None]):
            if row is None or row[0].startswith("#"):
                if row is not None:
                    _check_marker(row, path, block.line_of(i))
                if i > start:
                    yield _sentence(block.rows[start:i], kind, path, block.line_of(start))
                start = i + 1


def _check_marker(row: list[str], path: str, line: int) -> None:
    text = " ".join(row)
    if not (text.startswith("#begin document") or text.startswith("#end document")):
        raise DataFormatError(path, line, f"expected '#begin document (...)' or '#end document', found {text!r}")


def _sentence(rows: Sequence[list[str]], kind: str, path: str, first_line: int) -> Sentence:
    leading, trailing = _LEADING[kind], _TRAILING[kind]
    width = sentence_width(rows, path, first_line)
    if width < leading + trailing:
        layout = "11 fixed columns plus the coreference column" if kind == GOLD_CONLL else "8 fixed columns"
        raise DataFormatError(
            path, first_line, f"expected at least {leading + trailing} columns in a .{kind} file ({layout}), found {width}"
        )
    for i, row in enumerate(rows):
        if row[0] != rows[0][0]:
            raise DataFormatError(
                path, first_line + i, f"expected doc id {rows[0][0]!r} as on line {first_line}, found {row[0]!r}"
            )
        if natural_number(row[2]) is None:
            raise DataFormatError(path, first_line + i, f"expected a token number in column 3, found {row[2]!r}")
    n_args = width - leading - trailing
    predicate_rows = [i for i, row in enumerate(rows) if row[6] != _NONE and row[7] != _NONE]
    if len(predicate_rows) != n_args:
        raise DataFormatError(
            path,
            first_line,
            f"expected one bracket column per predicate (rows with lemma and {'frameset' if kind == GOLD_CONLL else 'roleset'}"
            f" set): {len(predicate_rows)} predicate rows but {n_args} bracket columns",
        )
    predicates = []
    for k, position in enumerate(predicate_rows):
        column = [row[leading + k] for row in rows]
        spans = predicate_spans(column, path, first_line)
        row = rows[position]
        predicates.append(Predicate(position=position, lemma=row[6], sense=row[7], arguments=tuple(spans)))
    return Sentence(
        words=[row[3] for row in rows],
        pos=[row[4] for row in rows],
        parse_bits=[row[5] for row in rows],
        predicates=predicates,
        source=path,
        line=first_line,
        doc_id=rows[0][0],
    )


def gold_conll_lines(doc_id: str, sentences: Iterable[Sentence], part: int = 0) -> list[str]:
    """One document in ``.gold_conll`` layout, ``#begin document`` to ``#end document``, lines without ends.

    Sense, speaker and coreference columns are written as ``-``, named entities as ``*``; the frameset
    column holds :attr:`Predicate.sense` (for PropBank-EWT the full roleset id, e.g. ``love.01``), so
    :func:`read_conll12` reads back the same predicates. Columns are right-aligned per sentence.

    Raises:
        ValueError: a sentence without POS or parse bits, a word containing whitespace, or a sense of ``-``.
    """
    lines = [f"#begin document ({doc_id}); part {part:03d}"]
    for sentence in sentences:
        n = len(sentence)
        if sentence.pos is None or sentence.parse_bits is None:
            raise ValueError(f"{sentence.where()}: writing .gold_conll needs POS and parse bits")
        lemma = [_NONE] * n
        frameset = [_NONE] * n
        for predicate in sentence.predicates:
            if not predicate.sense or predicate.sense == _NONE:
                raise ValueError(f"{sentence.where()}: predicate at {predicate.position} has no frameset to write")
            lemma[predicate.position] = predicate.lemma
            frameset[predicate.position] = predicate.sense
        arg_columns = [spans_to_brackets(p.arguments, n) for p in sentence.predicates]
        table = []
        for i, word in enumerate(sentence.words):
            if not word or any(c.isspace() for c in word):
                raise ValueError(f"{sentence.where()}: token {i} {word!r} is empty or contains whitespace")
            table.append(
                [doc_id, str(part), str(i), word, sentence.pos[i], sentence.parse_bits[i], lemma[i], frameset[i],
                 _NONE, _NONE, "*"] + [column[i] for column in arg_columns] + [_NONE]
            )
        widths = [max(len(row[c]) for row in table) for c in range(len(table[0]))]
        lines.extend("   ".join(cell.rjust(w) for cell, w in zip(row, widths)).rstrip() for row in table)
        lines.append("")
    lines.append("#end document")
    return lines
