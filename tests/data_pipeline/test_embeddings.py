"""GloVe loading with the shipped 50d subset."""

import gzip

import numpy as np
import pytest

from data_pipeline.embeddings import load_glove
from data_pipeline.errors import DataFormatError
from data_pipeline.vocab import OOV_ID, PAD_ID, Vocabularies
from tests.conftest import DATA

GLOVE = DATA / "embeddings" / "glove.6B.50d.subset.txt.gz"


@pytest.fixture(scope="module")
def glove_lines():
    with gzip.open(GLOVE, "rt", encoding="utf-8") as handle:
        return handle.read().splitlines()


@pytest.fixture(scope="module")
def vocabs():
    from data_pipeline.readers.conll12 import read_conll12

    return Vocabularies.build(read_conll12(DATA / "propbank-ewt" / "dev.gold_conll.gz"))


@pytest.fixture(scope="module")
def loaded(vocabs):
    return load_glove(GLOVE, vocabs.words)


def test_rows_are_glove_vectors(glove_lines, vocabs, loaded):
    matrix, coverage = loaded
    first = glove_lines[0].split(" ")
    assert first[0] == "the"
    assert matrix.shape == (len(vocabs.words), 50) and matrix.dtype == np.float32
    np.testing.assert_array_equal(matrix[vocabs.words.lookup("the")], np.array(first[1:], dtype=np.float32))
    some = next(line.split(" ") for line in glove_lines[1000:] if line.split(" ")[0] in vocabs.words)
    np.testing.assert_array_equal(matrix[vocabs.words.lookup(some[0])], np.array(some[1:], dtype=np.float32))
    assert not matrix[PAD_ID].any()


def test_coverage_counts_vocabulary_words_found(glove_lines, vocabs, loaded):
    _, coverage = loaded
    glove_words = {line.split(" ", 1)[0] for line in glove_lines}
    words = vocabs.words.entries[2:]
    assert coverage.total == len(words)
    assert coverage.found == sum(w in glove_words for w in words)
    assert 0 < coverage.found < coverage.total
    assert coverage.glove_rows == len(glove_lines) and coverage.dim == 50
    assert coverage.coverage == pytest.approx(coverage.found / coverage.total)


def test_missing_rows_are_seeded_normal(glove_lines, vocabs, loaded):
    matrix, _ = loaded
    glove_words = {line.split(" ", 1)[0] for line in glove_lines}
    missing = [i for i, w in enumerate(vocabs.words.entries) if i == OOV_ID or (i != PAD_ID and w not in glove_words)]
    values = matrix[missing]
    assert values.size > 5000
    assert values.std() == pytest.approx(50**-0.5, rel=0.05) and abs(values.mean()) < 0.01
    again, _ = load_glove(GLOVE, vocabs.words)
    other, _ = load_glove(GLOVE, vocabs.words, seed=1)
    np.testing.assert_array_equal(again, matrix)
    assert not np.array_equal(other[missing], values)
    found = [i for i in range(2, len(vocabs.words)) if vocabs.words.entries[i] in glove_words]
    np.testing.assert_array_equal(other[found], matrix[found])


def test_plain_text_and_any_dimension(glove_lines, vocabs, loaded, tmp_path):
    plain = tmp_path / "glove.txt"
    plain.write_text("\n".join(glove_lines[:3000]) + "\n", encoding="utf-8")
    matrix, coverage = load_glove(plain, vocabs.words)
    np.testing.assert_array_equal(matrix[vocabs.words.lookup("the")], loaded[0][vocabs.words.lookup("the")])
    assert coverage.glove_rows == 3000
    # A 7-dimensional file made of the first 7 values of each vector.
    small = tmp_path / "glove.7d.txt.gz"
    with gzip.open(small, "wt", encoding="utf-8") as handle:
        for line in glove_lines[:500]:
            handle.write(" ".join(line.split(" ")[:8]) + "\n")
    matrix7, coverage7 = load_glove(small, vocabs.words, dim=7)
    assert matrix7.shape == (len(vocabs.words), 7) and coverage7.dim == 7
    np.testing.assert_array_equal(matrix7[vocabs.words.lookup("the")], loaded[0][vocabs.words.lookup("the")][:7])


def test_malformed_files_name_the_line(glove_lines, vocabs, tmp_path):
    def write(lines):
        path = tmp_path / "bad.txt"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return path

    short = list(glove_lines[:20])
    short[4] = short[4].rsplit(" ", 1)[0]  # one value missing
    with pytest.raises(DataFormatError) as info:
        load_glove(write(short), vocabs.words)
    assert info.value.line == 5 and "50 values, found 49" in info.value.message

    long = list(glove_lines[:20])
    long[9] += " 0.5"
    with pytest.raises(DataFormatError) as info:
        load_glove(write(long), vocabs.words)
    assert info.value.line == 10

    text = list(glove_lines[:20])
    text[0] = text[0].replace("0.418", "x0.418")  # "the" is in the vocabulary, so its values are parsed
    with pytest.raises(DataFormatError) as info:
        load_glove(write(text), vocabs.words)
    assert info.value.line == 1 and "numbers" in info.value.message

    with pytest.raises(DataFormatError) as info:
        load_glove(write(glove_lines[:5]), vocabs.words, dim=100)
    assert info.value.line == 1 and "100 values" in info.value.message

    # a first line of two non-ASCII digits is not a word2vec header ("count dim"): a line of numbers
    with pytest.raises(DataFormatError) as info:
        load_glove(write(["\u00b2 \u00b2"] + glove_lines[:5]), vocabs.words)
    assert info.value.line in (1, 2)

    empty = tmp_path / "empty.txt"
    empty.write_text("", encoding="utf-8")
    with pytest.raises(DataFormatError, match="empty file"):
        load_glove(empty, vocabs.words)

    with pytest.raises(DataFormatError, match="cannot read"):
        load_glove(tmp_path / "absent.txt", vocabs.words)
