"""Reading CoNLL-style column files: one token per line, a blank line ends a sentence.

Shared by every reader and by the scorer. Files may be plain or gzip (by content, not by name);
text must be UTF-8 and any other byte sequence is an error naming the file and line.
"""

from __future__ import annotations

import collections
import dataclasses
import gzip
import os
import zlib
from typing import Iterator, Optional, Sequence

from data_pipeline.errors import DataFormatError

_GZIP_MAGIC = b"\x1f\x8b"


def read_lines(path: str | os.PathLike) -> list[str]:
    """All lines of a plain or gzip text file, without line ends.

    Raises:
        DataFormatError: the file is not UTF-8 (names the first bad line) or cannot be opened.
    """
    path = os.fspath(path)
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except OSError as error:
        raise DataFormatError(path, None, f"cannot read file: {error.strerror}") from error
    if raw[:2] == _GZIP_MAGIC:
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as error:
            raise DataFormatError(path, None, f"looks like gzip but does not decompress: {error}") from error
    lines = raw.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    text = []
    for number, line in enumerate(lines, start=1):
        try:
            text.append(line.decode("utf-8").rstrip("\r"))
        except UnicodeDecodeError as error:
            raise DataFormatError(
                path, number, f"expected UTF-8 text, found byte 0x{line[error.start]:02x} at column {error.start + 1}"
            ) from error
    return text


def natural_number(cell: str) -> Optional[int]:
    """The value of a cell of ASCII digits (``"0"``, ``"17"``); ``None`` for anything else (``"-1"``, ``"²"``, ``"١"``)."""
    return int(cell) if cell.isascii() and cell.isdigit() else None


def dependency_labels(cells: Sequence[str]) -> Optional[list[str]]:
    """A tree's dependency-label cells, or ``None`` when every one is ``_``: heads without labels,
    which have no LAS to score (it is "n/a", not 0)."""
    return None if all(cell == "_" for cell in cells) else list(cells)


def sentence_width(rows: Sequence[Sequence[str]], path: str, first_line: int, columns: str = "columns") -> int:
    """The number of cells of a sentence's rows (row ``i`` on line ``first_line + i``).

    The width most rows have is the expected one, so a line with a cell more or less than the others is the line
    blamed, wherever it is in the sentence (on a tie, the first row's width).

    Raises:
        DataFormatError: naming the first line whose width differs.
    """
    width = collections.Counter(len(row) for row in rows).most_common(1)[0][0]
    for i, row in enumerate(rows):
        if len(row) != width:
            raise DataFormatError(
                path,
                first_line + i,
                f"expected {width} {columns} like the other lines of its sentence (lines {first_line}-"
                f"{first_line + len(rows) - 1}), found {len(row)}",
            )
    return width


@dataclasses.dataclass
class Block:
    """One sentence of a column file: its rows split on whitespace, and where it starts.

    ``first_line`` is the 1-based line of the first row; row ``i`` is on line ``first_line + i``
    (comment lines inside a block are not allowed by any supported format, so this is exact).
    ``comments`` holds the comment lines just before the block.
    """

    path: str
    first_line: int
    rows: list[list[str]]
    comments: list[str] = dataclasses.field(default_factory=list)

    def line_of(self, row: int) -> int:
        return self.first_line + row


def read_blocks(
    path: str | os.PathLike,
    comment_prefix: Optional[str] = None,
    separator: Optional[str] = None,
) -> Iterator[Block]:
    """Yield the sentences (blocks of non-blank lines) of a column file.

    Args:
        path: plain or gzip file.
        comment_prefix: lines starting with it are comments (``"#"`` for CoNLL-U and ``.gold_conll``),
            collected into the next block's ``comments``.
        separator: ``None`` splits on runs of whitespace; ``"\\t"`` for tab-separated formats.
    """
    path = os.fspath(path)
    rows: list[list[str]] = []
    comments: list[str] = []
    first = 0
    lines = read_lines(path)
    for number, line in enumerate(lines, start=1):
        if comment_prefix is not None and line.startswith(comment_prefix):
            if rows:
                raise DataFormatError(path, number, "expected a token line or a blank line, found a comment inside a sentence")
            comments.append(line)
            continue
        if not line.strip():
            if rows:
                yield Block(path, first, rows, comments)
                rows, comments = [], []
            continue
        if not rows:
            first = number
        rows.append(line.split(separator) if separator else line.split())
    if rows:
        yield Block(path, first, rows, comments)
