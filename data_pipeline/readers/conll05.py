"""Reader for the CoNLL-2005 shared task data (Carreras & Màrquez 2005).

Two inputs are accepted.

**A split directory of the official ``conll05st-release`` layout**, e.g. ``conll05st-release/test.wsj``.
Each annotation layer is a folder holding either one file ``<split>.<layer>[.gz]`` (the test sets,
``devel/props/devel.24.props.gz``) or one file per WSJ section (``train/props/train.02.props.gz`` …
``train.21.props.gz``), read in sorted (section) order. Files may be gzip or plain. Layers used:

* ``words/`` (required): one token per line.
* ``props/`` (required): column 0 is the target lemma or ``-``, then one Start-End bracket column per
  target; the k-th bracket column belongs to the k-th row whose column 0 is not ``-``.
* ``synt.cha/`` (optional): column 0 the Charniak parser's POS tag (it writes ``AUX`` for auxiliaries),
  column 1 its parse bit. They become :attr:`Sentence.pos` and :attr:`Sentence.parse_bits`; the
  release has no gold POS or gold trees (those are in the LDC Penn Treebank).
* ``senses/`` (optional, train/devel only): the VerbNet sense of each target row (``-`` elsewhere),
  stored as :attr:`Predicate.sense`.

Other layers (``ne``, ``synt.col2``, ``synt.upc``, ``targets``, ``null``) have no field in
:class:`Sentence` and are not read. The layers must align: the same files (same section names), the
same sentences and the same number of lines per sentence; the first difference is reported with file
and line. The train/devel ``words`` are not in the public release (they are WSJ text from the Penn
Treebank); a missing ``words/`` folder is an error that says so.

**An already pasted column file** (a single file, plain or gzip), one token per line, blank line between
sentences. Its columns are::

    WORD [POS [PARSE [EXTRA ...]]] LEMMA ARG_1 ... ARG_k

i.e. ``paste words synt.cha props`` (``WORD POS PARSE LEMMA ARGS…``, the common layout), but also
``paste words props``, ``paste words synt.cha ne props`` and the like. The rule that finds the props
part: the **lemma column is the rightmost column holding a cell that is not a bracket cell** (bracket
cells look like ``(A0*``, ``*``, ``*)``; a lemma or ``-`` never does). It is fixed on the first
sentence and must be the same for the whole file; columns after it are the argument columns. Column 1
(if before the lemma column) is POS, column 2 (if before it) the parse bit; further columns between the
parse bit and the lemma (e.g. named entities) are not read.
"""

from __future__ import annotations

import os
import re
from typing import Optional, Sequence

from data_pipeline.column_file import Block, read_blocks, sentence_width
from data_pipeline.errors import DataFormatError
from data_pipeline.sentence import Predicate, Sentence
from data_pipeline.spans import predicate_spans

NO_TARGET = "-"
REQUIRED_LAYERS = ("words", "props")
OPTIONAL_LAYERS = ("synt.cha", "senses")
# Cells per row of each layer (props: variable, at least 1).
_LAYER_WIDTH = {"words": 1, "synt.cha": 2, "senses": 1}
_BRACKET_CELL = re.compile(r"^(?:\([^()*\s]+)*\*\)*$")


def read_conll05(path: str | os.PathLike) -> list[Sentence]:
    """Read a CoNLL-2005 split directory (official layout) or a pasted column file.

    Args:
        path: a split directory such as ``conll05st-release/test.wsj``, or a single pasted file (see the
            module docstring for both layouts).

    Returns:
        One :class:`Sentence` per sentence, with words, POS and parse bits (from ``synt.cha`` or the pasted
        columns, else ``None``), and predicates with lemma, sense (``senses`` layer, else ``None``) and argument
        spans (``V``, ``C-`` and ``R-`` kept as written). ``source``/``line`` point at the props file.

    Raises:
        DataFormatError: missing layer or words (with the reason), layers that do not align, a props row with a
            different column count from its sentence, a number of bracket columns different from the number of
            targets, unbalanced brackets, a second ``(V*)`` in a column, non-UTF-8 bytes.
    """
    path = os.fspath(path)
    if os.path.isdir(path):
        return _read_split_directory(path)
    if os.path.isfile(path):
        return _read_pasted(path)
    raise DataFormatError(path, None, "expected a conll05st-release split directory or a pasted column file; found neither")


# ---------------------------------------------------------------------------------------------------------------------
# Official layout


def _layer_files(split_dir: str, layer: str) -> Optional[dict[str, str]]:
    """``{section key: file}`` of a layer folder, ``None`` when the folder is absent.

    The key is the file name without ``.<layer>`` and ``.gz``: ``test.wsj``, ``train.02``, ``devel.24``.
    """
    folder = os.path.join(split_dir, layer)
    if not os.path.isdir(folder):
        return None
    files = {}
    for name in sorted(os.listdir(folder)):
        full = os.path.join(folder, name)
        if not os.path.isfile(full) or name.startswith("."):
            continue
        stem = name[:-3] if name.endswith(".gz") else name
        if not stem.endswith("." + layer):
            raise DataFormatError(full, None, f"expected files named <split>.{layer} or <split>.{layer}.gz in {folder}")
        files[stem[: -len(layer) - 1]] = full
    if not files:
        raise DataFormatError(folder, None, f"expected at least one <split>.{layer}[.gz] file, found none")
    return files


def _missing_words_message(split_dir: str) -> str:
    split = os.path.basename(os.path.normpath(split_dir))
    try:
        sections = list(_layer_files(split_dir, "props") or [split])
    except DataFormatError:
        sections = [split]
    expected = os.path.join(split_dir, "words", f"{sections[0]}.words.gz")
    if len(sections) > 1:
        expected += f" ... {sections[-1]}.words.gz"
    return (
        f"expected a words/ layer (e.g. {expected}), found none. The CoNLL-2005 release ships words only for the "
        "test sets; train and devel words are Wall Street Journal text from the Penn Treebank (LDC99T42), sections "
        "02-21 (train) and 24 (devel), which you must extract from your own copy into "
        f"{os.path.join(split_dir, 'words')} (one token per line, blank line between sentences, one file per section "
        "as in the props/ folder)"
    )


def _read_split_directory(split_dir: str) -> list[Sentence]:
    layers: dict[str, dict[str, str]] = {}
    for layer in REQUIRED_LAYERS + OPTIONAL_LAYERS:
        files = _layer_files(split_dir, layer)
        if files is None:
            if layer == "words":
                raise DataFormatError(os.path.join(split_dir, "words"), None, _missing_words_message(split_dir))
            if layer in REQUIRED_LAYERS:
                raise DataFormatError(os.path.join(split_dir, layer), None, f"expected the {layer}/ layer folder, found none")
            continue
        layers[layer] = files
    sections = list(layers["props"])
    for layer, files in layers.items():
        if list(files) != sections:
            raise DataFormatError(
                os.path.join(split_dir, layer),
                None,
                f"expected the same files as props/ ({', '.join(sections)}), found {', '.join(files) or 'none'}",
            )
    sentences: list[Sentence] = []
    for section in sections:
        blocks = {layer: list(read_blocks(files[section])) for layer, files in layers.items()}
        _check_alignment(blocks)
        for i, props_block in enumerate(blocks["props"]):
            sentences.append(
                _sentence_from_layers(
                    words=blocks["words"][i],
                    props=props_block,
                    synt=blocks["synt.cha"][i] if "synt.cha" in blocks else None,
                    senses=blocks["senses"][i] if "senses" in blocks else None,
                )
            )
    return sentences


def _check_alignment(blocks: dict[str, list[Block]]) -> None:
    """Same number of sentences and of lines per sentence in every layer; fixed cell counts per row."""
    reference = blocks["props"]
    for layer, layer_blocks in blocks.items():
        for k, (block, ref) in enumerate(zip(layer_blocks, reference)):
            if len(block.rows) == len(ref.rows) and block.first_line != ref.first_line:
                raise DataFormatError(
                    block.path,
                    block.first_line,
                    f"layers do not align: sentence {k + 1} starts on line {block.first_line} here but on line "
                    f"{ref.first_line} in {ref.path} (extra or missing blank lines)",
                )
            if len(block.rows) != len(ref.rows):
                shorter, longer = (block, ref) if len(block.rows) < len(ref.rows) else (ref, block)
                cut = len(shorter.rows)
                raise DataFormatError(
                    shorter.path,
                    shorter.line_of(cut),
                    f"layers do not align: sentence {k + 1} ends here after {cut} lines, but continues on line "
                    f"{longer.line_of(cut)} of {longer.path} ({len(longer.rows)} lines); every layer needs one line per token",
                )
            width = _LAYER_WIDTH.get(layer)
            if width is not None:
                for r, row in enumerate(block.rows):
                    if len(row) != width:
                        raise DataFormatError(
                            block.path, block.line_of(r), f"expected {width} column(s) in the {layer} layer, found {len(row)}"
                        )
        if len(layer_blocks) != len(reference):
            few, many = (layer_blocks, reference) if len(layer_blocks) < len(reference) else (reference, layer_blocks)
            extra = many[len(few)]
            raise DataFormatError(
                extra.path,
                extra.first_line,
                f"layers do not align: this file has {len(many)} sentences but {few[-1].path if few else 'the other layer'} "
                f"has {len(few)}; sentence {len(few) + 1} starting here has no counterpart",
            )


def _sentence_from_layers(words: Block, props: Block, synt: Optional[Block], senses: Optional[Block]) -> Sentence:
    predicates = _predicates(props, lemma_column=0)
    if senses is not None:
        predicates = _with_senses(predicates, props, senses)
    return Sentence(
        words=[row[0] for row in words.rows],
        pos=None if synt is None else [row[0] for row in synt.rows],
        parse_bits=None if synt is None else [row[1] for row in synt.rows],
        predicates=predicates,
        source=props.path,
        line=props.first_line,
    )


def _with_senses(predicates: list[Predicate], props: Block, senses: Block) -> list[Predicate]:
    targets = {p.position for p in predicates}
    for r, row in enumerate(senses.rows):
        if row[0] != NO_TARGET and r not in targets:
            raise DataFormatError(
                senses.path, senses.line_of(r), f"expected '-' (line {props.line_of(r)} of {props.path} is not a target), found sense {row[0]!r}"
            )
    return [
        Predicate(p.position, p.lemma, None if senses.rows[p.position][0] == NO_TARGET else senses.rows[p.position][0], p.arguments)
        for p in predicates
    ]


def _predicates(block: Block, lemma_column: int) -> list[Predicate]:
    """Targets and their argument spans from the props part of a block's rows: ``rows[r][lemma_column:]``."""
    rows, path, first_line = block.rows, block.path, block.first_line
    width = sentence_width(rows, path, first_line)
    n_columns = width - lemma_column - 1
    targets = [r for r, row in enumerate(rows) if row[lemma_column] != NO_TARGET]
    if len(targets) != n_columns:
        raise DataFormatError(
            path,
            first_line,
            f"expected one argument column per target (row whose lemma column {lemma_column + 1} is not '-'): "
            f"{len(targets)} targets but {n_columns} argument columns",
        )
    predicates = []
    for k, position in enumerate(targets):
        column = [row[lemma_column + 1 + k] for row in rows]
        spans = predicate_spans(column, path, first_line)
        predicates.append(Predicate(position=position, lemma=rows[position][lemma_column], arguments=tuple(spans)))
    return predicates


# ---------------------------------------------------------------------------------------------------------------------
# Pasted column file


def lemma_column(rows: Sequence[Sequence[str]]) -> int:
    """0-based index of the props lemma column of a pasted sentence: the rightmost column with a non-bracket cell.

    Returns -1 when every cell of every column is a bracket cell (no lemma column).
    """
    width = max(len(row) for row in rows)
    for column in range(width - 1, -1, -1):
        if any(column < len(row) and not _BRACKET_CELL.match(row[column]) for row in rows):
            return column
    return -1


def _read_pasted(path: str) -> list[Sentence]:
    sentences = []
    fixed: Optional[int] = None
    for block in read_blocks(path):
        sentence_width(block.rows, path, block.first_line)
        if fixed is None:
            fixed = lemma_column(block.rows)
            if fixed < 1:
                raise DataFormatError(
                    path,
                    block.first_line,
                    "expected a pasted CoNLL-2005 file 'WORD [POS [PARSE ...]] LEMMA ARGS...' whose lemma column (the "
                    f"rightmost column with a cell that is not a bracket cell) comes after the word; found it at column {fixed + 1}",
                )
        for r, row in enumerate(block.rows):
            if len(row) <= fixed:
                raise DataFormatError(
                    path, block.line_of(r), f"expected at least {fixed + 1} columns (word ... lemma, as in the file's first sentence), found {len(row)}"
                )
        predicates = _predicates(block, lemma_column=fixed)
        sentences.append(
            Sentence(
                words=[row[0] for row in block.rows],
                pos=[row[1] for row in block.rows] if fixed >= 2 else None,
                parse_bits=[row[2] for row in block.rows] if fixed >= 3 else None,
                predicates=predicates,
                source=path,
                line=block.first_line,
            )
        )
    return sentences
