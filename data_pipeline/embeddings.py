"""Pre-trained GloVe vectors as an embedding matrix for a word vocabulary.

:func:`load_glove` reads any GloVe text file (``glove.6B.100d.txt``, the shipped
``data/embeddings/glove.6B.50d.subset.txt.gz``, …): plain or gzip (by content), any dimension,
``word v1 … vD`` one per line. The dimension is taken from the first line (or checked against
``dim`` when given) and every line must have exactly that many values. A first line of two integers
(``count dim``, the word2vec text header) is accepted and checked too.

Rows of the returned matrix follow the vocabulary's indices (:mod:`data_pipeline.vocab`):

- row ``PAD_ID`` (0) is zeros, so padding contributes nothing;
- a word found in GloVe gets its vector (the first occurrence of its lower-cased form, since GloVe
  files are in frequency order and cased files can hold several forms of one word);
- every other row — the OOV row and words GloVe lacks — is drawn from N(0, std²) with
  ``std = dim ** -0.5`` by default (DeepAtt's initialiser for its other embedding matrices, Tan et al.
  2018 §4 "Model Setup") from a seeded generator, so two loads give the same matrix.

Values are only parsed for the vocabulary's words (a 400k-line file is mostly other words), but
every line's value count is checked.
"""

from __future__ import annotations

import dataclasses
import gzip
import os
from typing import Iterator, Optional

import numpy as np

from data_pipeline.column_file import natural_number
from data_pipeline.errors import DataFormatError
from data_pipeline.vocab import PAD_ID, Vocabulary, normalise_word

_GZIP_MAGIC = b"\x1f\x8b"


@dataclasses.dataclass(frozen=True)
class GloveCoverage:
    """How much of a vocabulary GloVe covers.

    Attributes:
        found: vocabulary words (padding and OOV entries excluded) that have a GloVe vector.
        total: vocabulary words (padding and OOV entries excluded).
        glove_rows: lines of vectors in the file.
        dim: vector dimension.
        duplicates: GloVe lines whose lower-cased word was already taken by an earlier line.
    """

    found: int
    total: int
    glove_rows: int
    dim: int
    duplicates: int = 0

    @property
    def coverage(self) -> float:
        """``found / total`` (0 for an empty vocabulary)."""
        return self.found / self.total if self.total else 0.0


def _lines(path: str) -> Iterator[tuple[int, str]]:
    try:
        with open(path, "rb") as probe:
            magic = probe.read(2)
    except OSError as error:
        raise DataFormatError(path, None, f"cannot read GloVe file: {error.strerror}") from error
    opener = gzip.open if magic == _GZIP_MAGIC else open
    try:
        with opener(path, "rb") as handle:
            for number, raw in enumerate(handle, start=1):
                try:
                    yield number, raw.decode("utf-8").rstrip("\r\n")
                except UnicodeDecodeError as error:
                    raise DataFormatError(path, number, f"expected UTF-8 text, found byte 0x{raw[error.start]:02x}") from error
    except (OSError, EOFError) as error:
        # gzip.BadGzipFile is an OSError; a truncated archive ends in EOFError.
        raise DataFormatError(path, None, f"cannot read GloVe file: {error}") from error


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _split(line: str, dim: int, path: str, number: int) -> tuple[str, list[str]]:
    """``word`` and its ``dim`` value strings; a word may contain spaces (glove.840B has some)."""
    parts = line.rstrip().split(" ")
    if len(parts) < dim + 1:
        raise DataFormatError(path, number, f"expected a word and {dim} values, found {len(parts) - 1} values")
    head = parts[:-dim]
    # Extra leading fields are part of the word only if none of them is a number; otherwise the
    # line simply has too many values.
    if len(head) > 1 and any(_is_number(h) for h in head[1:]):
        raise DataFormatError(path, number, f"expected a word and {dim} values, found {len(parts) - 1} values")
    word = " ".join(head)
    if not word:
        raise DataFormatError(path, number, "expected a word before the values, found an empty field")
    return word, parts[-dim:]


def _header_dim(fields: list[str]) -> Optional[int]:
    """The dimension a first line of two integers (word2vec's ``count dim`` header) gives, else None."""
    if len(fields) == 2 and all(natural_number(f) is not None for f in fields):
        return int(fields[1])
    return None


def embedding_dimension(path: str | os.PathLike) -> int:
    """The dimension of a GloVe text file, from its first line alone (checked before any work)."""
    path = os.fspath(path)
    for number, line in _lines(path):
        fields = line.split()
        dim = _header_dim(fields) or len(fields) - 1
        if dim < 1:
            raise DataFormatError(path, number, "expected a word followed by its vector values, found one field")
        return dim
    raise DataFormatError(path, None, "expected GloVe vectors, found an empty file")


def load_glove(
    path: str | os.PathLike,
    vocab: Vocabulary,
    dim: Optional[int] = None,
    seed: int = 0,
    oov_std: Optional[float] = None,
) -> tuple[np.ndarray, GloveCoverage]:
    """Embedding matrix for ``vocab`` from a GloVe text file.

    Args:
        path: GloVe text file, plain or gzip.
        vocab: the ``words`` vocabulary (index 0 padding, index 1 OOV).
        dim: expected dimension; ``None`` takes it from the file's first line.
        seed: seed of the random rows.
        oov_std: standard deviation of the random rows; default ``dim ** -0.5``.

    Returns:
        ``(matrix, coverage)``: float32 ``[len(vocab), dim]`` and a :class:`GloveCoverage`.

    Raises:
        DataFormatError: an empty file, a line with a different number of values than the first
            (or than ``dim``), a value that is not a number, or non-UTF-8 bytes; names the line.
    """
    path = os.fspath(path)
    wanted = {entry: i for i, entry in enumerate(vocab.entries) if i != PAD_ID and i != vocab.oov_id}
    vectors: dict[int, np.ndarray] = {}
    file_dim = dim
    rows = duplicates = 0
    taken: set[str] = set()
    for number, line in _lines(path):
        if not line.strip():
            raise DataFormatError(path, number, "expected 'word v1 ... vD', found an empty line")
        if number == 1:
            fields = line.split()
            header_dim = _header_dim(fields)
            if header_dim is not None:
                if file_dim is not None and header_dim != file_dim:
                    raise DataFormatError(path, 1, f"expected dimension {file_dim}, header says {header_dim}")
                file_dim = header_dim
                continue
            if file_dim is None:
                file_dim = len(fields) - 1
                if file_dim < 1:
                    raise DataFormatError(path, 1, "expected a word followed by its vector values, found one field")
        word, values = _split(line, file_dim, path, number)
        rows += 1
        key = normalise_word(word)
        if key in taken:
            duplicates += 1
            continue
        taken.add(key)
        index = wanted.get(key)
        if index is not None:
            try:
                vectors[index] = np.asarray(values, dtype=np.float32)
            except ValueError as error:
                raise DataFormatError(path, number, f"expected {file_dim} numbers after {word!r}: {error}") from error
    if file_dim is None or rows == 0:
        raise DataFormatError(path, None, "expected GloVe vectors, found an empty file")
    std = file_dim**-0.5 if oov_std is None else oov_std
    rng = np.random.default_rng(seed)
    matrix = rng.normal(0.0, std, size=(len(vocab), file_dim)).astype(np.float32)
    matrix[PAD_ID] = 0.0
    for index, vector in vectors.items():
        matrix[index] = vector
    return matrix, GloveCoverage(found=len(vectors), total=len(wanted), glove_rows=rows, dim=file_dim, duplicates=duplicates)
