"""Every reader on mutated real files and arbitrary bytes: it returns, or raises a DataFormatError naming a file of
the input and a line of it. Strategies and checks are those of ``benchmarks/fuzz_readers.py`` (which runs many
more examples); the regression cases below are inputs that fuzzing found raising something else."""

from __future__ import annotations

import gzip
import json

import pytest
from hypothesis import HealthCheck, given, settings

from benchmarks.fuzz_readers import READER_TARGETS, MissingData, check, inputs, seed_files, target
from data_pipeline.errors import DataFormatError

FUZZ = settings(max_examples=50, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def fuzz_target(name: str):
    """The fuzz target ``name``, skipping the test when its real files are absent."""
    try:
        return target(name)
    except MissingData as missing:
        pytest.skip(str(missing))


def real_files(name: str) -> dict[str, bytes]:
    """The target's unmutated files, as bytes."""
    return seed_files(fuzz_target(name))


def read_edited(tmp_path, name: str, file: str, row: int, change) -> None:
    """Write the target's real files with ``change(cells) -> cells`` applied to row ``row`` (0-based line) of
    ``file``, and read them. Cells are split and joined on tabs, or on whitespace in files without tabs."""
    files = real_files(name)
    lines = files[file].decode("utf-8").split("\n")
    separator = "\t" if "\t" in lines[row] else "   "
    lines[row] = separator.join(change(lines[row].split("\t") if separator == "\t" else lines[row].split()))
    files[file] = "\n".join(lines).encode("utf-8")
    for relative, raw in files.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_bytes(raw)
    fuzz_target(name).run(tmp_path)


@pytest.mark.parametrize("name", READER_TARGETS)
def test_reader_returns_or_raises_a_placed_data_format_error(name):
    subject = fuzz_target(name)

    @FUZZ
    @given(inputs(subject))
    def read(files):
        check(subject, files)

    read()


@pytest.mark.parametrize("name", READER_TARGETS)
def test_a_corrupt_gzip_file_is_a_data_format_error(name, tmp_path):
    # zlib.error ("invalid distance too far back") escaped the reader before.
    files = real_files(name)
    file = sorted(files)[0]
    packed = gzip.compress(files[file], mtime=0)
    files[file] = packed[:12] + b"\xff" + packed[12:]
    for relative, raw in files.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_bytes(raw)
    with pytest.raises(DataFormatError, match="looks like gzip but does not decompress") as caught:
        fuzz_target(name).run(tmp_path)
    assert caught.value.path == str(tmp_path / file)


def _set_cell(column: int, value: str):
    def change(cells):
        cells[column] = value
        return cells

    return change


@pytest.mark.parametrize("cell", ["\u00b2", "3\u00b2", "\u2460"])
def test_a_lisa_head_that_is_a_digit_but_not_a_number(tmp_path, cell):
    # str.isdigit() accepts superscripts and circled digits, int() does not: ValueError before.
    with pytest.raises(DataFormatError, match=f"expected a head between 0 and 8 in column 7, found '{cell}'") as caught:
        read_edited(tmp_path, "lisa", "mini.lisa", 2, _set_cell(6, cell))
    assert caught.value.line == 3


def test_a_lisa_token_id_that_is_a_digit_but_not_a_number(tmp_path):
    with pytest.raises(DataFormatError, match="expected token id 2 in column 3, found '\u00b2'") as caught:
        read_edited(tmp_path, "lisa", "mini.lisa", 2, _set_cell(2, "\u00b2"))
    assert caught.value.line == 3


@pytest.mark.parametrize("name", ["conllu", "parse"])
def test_a_conllu_head_that_is_a_digit_but_not_a_number(tmp_path, name):
    # Line 6 of the excerpt is the first word line ("1 From from ADP IN _ 3 case ...").
    with pytest.raises(DataFormatError, match="expected a HEAD between 0 and 7, found '\u2460'") as caught:
        read_edited(tmp_path, name, "dev.conllu", 5, _set_cell(6, "\u2460"))
    assert caught.value.line == 6


# Token lines inside a sentence of each real file: its first line and one in the middle.
RAGGED = [
    ("conll05-pasted", "test.wsj.pasted", 0), ("conll05-pasted", "test.wsj.pasted", 4),
    ("conll05-split", "test.wsj/props/test.wsj.props", 9), ("conll05-split", "test.wsj/props/test.wsj.props", 15),
    ("conll12-gold_conll", "dev.gold_conll", 1), ("conll12-gold_conll", "dev.gold_conll", 4),
    ("conll12-gold_skel", "doc.gold_skel", 0), ("conll12-gold_skel", "doc.gold_skel", 5),
    ("lisa", "mini.lisa", 0), ("lisa", "mini.lisa", 4),
    ("conllu", "dev.conllu", 5), ("conllu", "dev.conllu", 8),
]


@pytest.mark.parametrize("name, file, row", RAGGED)
@pytest.mark.parametrize("edit", ["cell added at the end", "cell added before the last", "last cell dropped"])
def test_a_line_with_a_cell_more_or_less_is_blamed_at_that_line(tmp_path, name, file, row, edit):
    # The width expected was the sentence's first line's: an extra cell on a first line blamed the second line,
    # and in a pasted CoNLL-2005 file an extra non-bracket cell at the end moved the lemma column (line 1 blamed).
    change = {
        "cell added at the end": lambda cells: cells + ["X"],
        "cell added before the last": lambda cells: cells[:-1] + ["X", cells[-1]],
        "last cell dropped": lambda cells: cells[:-1],
    }[edit]
    with pytest.raises(DataFormatError, match=r"expected \d+ (tab-separated )?(CoNLL-U )?columns") as caught:
        read_edited(tmp_path, name, file, row, change)
    assert (caught.value.path, caught.value.line) == (str(tmp_path / file), row + 1)


def test_the_benchmark_counts_inputs_and_failures_per_target(tmp_path, capsys):
    from benchmarks.fuzz_readers import main

    out = tmp_path / "fuzz.json"
    assert main(["--examples", "5", "--targets", "lisa", "conllu", "--out", str(out)]) == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    assert [(row["target"], row["inputs"], row["failing_inputs"]) for row in report["rows"]] == [
        ("lisa", 5, 0), ("conllu", 5, 0)]
    assert report["examples_per_target"] == 5 and "lisa" in capsys.readouterr().out
