"""``python -m lisa_tf label-corpus`` (lisa_tf.corpus_labelling): the Beam pipeline writes, on real EWT
text, the frames ``predict --format jsonl`` writes; the same command writes the same files whatever the
number of workers; bad input becomes dead letters with reasons, never lost."""

import gzip
import json
import pathlib

import pytest

from benchmarks.label_corpus import score_difference, without_scores
from benchmarks.raw_text_srl import texts_of
from lisa_tf.cli import main

ROOT = pathlib.Path(__file__).resolve().parents[1]
TEST_TEXT = ROOT / "data" / "propbank-ewt" / "test.conllu.gz"
#: the fast shipped model: the pipeline, not the model, is under test
MODEL = "srl-fast"


def _records(prefix: pathlib.Path) -> list[dict]:
    return [json.loads(line) for path in sorted(prefix.parent.glob(prefix.name + "-0*-of-*.jsonl"))
            for line in path.read_text(encoding="utf-8").splitlines()]


def _counters(report: str) -> dict:
    """The counter table ``label-corpus`` prints: ``{"documents": 2, "dead letters": 0, ...}``."""
    rows = [line.split() for line in report.splitlines() if line.startswith("  ")]
    return {" ".join(row[:-1]): int(row[-1].replace(",", "")) for row in rows}


def _shards(prefix: pathlib.Path) -> dict:
    return {p.name: p.read_bytes() for p in prefix.parent.glob(prefix.name + "-*.jsonl")}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """36 EWT test paragraphs in two files, one gzipped, with a blank line in each."""
    directory = tmp_path_factory.mktemp("corpus")
    texts = texts_of(TEST_TEXT)[:36]
    (directory / "a.txt").write_text("\n".join(texts[:10] + [""] + texts[10:20]) + "\n", encoding="utf-8")
    with gzip.open(directory / "b.txt.gz", "wt", encoding="utf-8") as handle:
        handle.write("\n".join(texts[20:28] + ["   "] + texts[28:]) + "\n")
    return directory


def test_frames_equal_predict_and_do_not_depend_on_the_workers(corpus, tmp_path, capsys):
    two = tmp_path / "two" / "frames"
    assert main(["label-corpus", "--model", MODEL, "--input", str(corpus / "*.txt*"), "--output", str(two),
                 "--num-shards", "3", "--direct_num_workers", "2", "--direct_running_mode", "multi_processing"]) == 0
    report = capsys.readouterr().err
    records = _records(two)
    assert sorted(_shards(two)) == [f"frames-0000{k}-of-00003.jsonl" for k in range(3)] + [
        "frames-dead-letters-00000-of-00001.jsonl"]
    assert (two.parent / "frames-dead-letters-00000-of-00001.jsonl").read_text() == ""

    # predict --format jsonl on each file (decompressed: predict reads plain text)
    plain = tmp_path / "b.txt"
    plain.write_bytes(gzip.decompress((corpus / "b.txt.gz").read_bytes()))
    expected = {}
    for name, path in (("a.txt", corpus / "a.txt"), ("b.txt.gz", plain)):
        out = tmp_path / f"{name}.jsonl"
        assert main(["predict", "--model", MODEL, "--input", str(path), "--format", "jsonl", "--out", str(out)]) == 0
        for line in out.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            expected.setdefault((name, record["line"]), []).append(record)
    got = {}
    for record in records:
        got.setdefault((pathlib.Path(record.pop("source")).name, record["line"]), []).append(record)
    # the same frames; a score (a float32 mean) may move in its last digit with the batch a sentence is in
    assert without_scores(got) == without_scores(expected) and score_difference(got, expected) <= 2e-4
    assert sum(len(v) for v in got.values()) >= 36 and sum(not r["tokens"] for v in got.values() for r in v) == 2
    # records of a file stay in order within a shard
    for path in sorted(two.parent.glob("frames-0*-of-*.jsonl")):
        keys = [(r["source"], r["line"]) for r in map(json.loads, path.read_text().splitlines())]
        assert keys == sorted(keys)
    counters = _counters(report)
    assert counters["documents"] == 2 and counters["empty"] == 2 and counters["lines"] == len(got)
    assert counters["sentences"] == sum(len(v) for v in got.values()) - 2 and counters["dead letters"] == 0
    assert counters["tokens"] == sum(len(r["tokens"]) for v in got.values() for r in v)

    # the same command in one process writes the same bytes
    one = tmp_path / "one" / "frames"
    assert main(["label-corpus", "--model", MODEL, "--input", str(corpus / "*.txt*"), "--output", str(one),
                 "--num-shards", "3"]) == 0
    assert _shards(one) == _shards(two)


def test_poisoned_input_goes_to_dead_letters_and_the_rest_is_written(corpus, tmp_path, capsys):
    poisoned = tmp_path / "in"
    poisoned.mkdir()
    texts = texts_of(TEST_TEXT)[40:46]
    (poisoned / "binary.txt").write_bytes((ROOT / "data" / "propbank-ewt" / "test.conllu.gz").read_bytes()[:4000])
    lines = [t.encode() for t in texts[:3]] + [b"caf\xe9 au lait is \xff not UTF-8"] + [t.encode() for t in texts[3:]]
    lines.insert(2, " ".join(["word"] * 10_000).encode())
    (poisoned / "mixed.txt").write_bytes(b"\n".join(lines) + b"\n")
    out = tmp_path / "out" / "frames"
    assert main(["label-corpus", "--model", MODEL, "--input", str(poisoned / "*.txt"), "--output", str(out)]) == 2
    report = capsys.readouterr().err
    dead = [json.loads(line) for line in (out.parent / "frames-dead-letters-00000-of-00001.jsonl").read_text().splitlines()]
    reasons = {(pathlib.Path(d["source"]).name, d["line"]): d["reason"] for d in dead}
    assert set(reasons) == {("binary.txt", None), ("mixed.txt", 3), ("mixed.txt", 5)}
    assert reasons[("binary.txt", None)].startswith("a binary file (a NUL byte at byte")
    assert "10,000 tokens" in reasons[("mixed.txt", 3)] and "not valid UTF-8 (byte 0xe9" in reasons[("mixed.txt", 5)]
    written = _records(out)
    assert {r["line"] for r in written} == {1, 2, 4, 6, 7, 8} and all(r["tokens"] for r in written)
    of_line = dict(zip([1, 2, 4, 6, 7, 8], texts))
    assert all(r["text"] in of_line[r["line"]] for r in written)
    counters = _counters(report)
    assert counters["dead letters"] == 3 and counters["documents"] == 2 and counters["lines"] == 8


def test_bad_options_are_one_line_errors(corpus, tmp_path, capsys):
    assert main(["label-corpus", "--input", str(tmp_path / "none*.txt"), "--output", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].startswith(f"error: --input {tmp_path / 'none*.txt'}: no file")
    assert main(["label-corpus", "--model", MODEL, "--input", str(corpus / "a.txt"), "--output", str(tmp_path / "o"),
                 "--no_such_beam_flag", "3"]) == 2
    assert "unrecognized arguments: --no_such_beam_flag" in capsys.readouterr().err
    assert main(["label-corpus", "--model", str(tmp_path / "missing"), "--input", str(corpus / "a.txt"),
                 "--output", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err.strip().startswith(f"error: --model {tmp_path / 'missing'}: no such file")


@pytest.mark.parametrize("name", ["long.txt", "long.txt.gz"])
def test_a_file_longer_than_the_binary_probe_is_read_line_for_line(tmp_path, name):
    """The probe's bytes (lisa_tf.corpus_labelling.BINARY_PROBE) are given back before the rest of the file:
    every line, the one across the probe's end included, comes out whole and in order."""
    from apache_beam.io import fileio
    from apache_beam.io.filesystem import CompressionTypes, FileMetadata

    from lisa_tf.corpus_labelling import BINARY_PROBE, ReadParagraphs

    texts = texts_of(TEST_TEXT)[:300]
    body = "\n".join(texts) + "\n"
    assert len(body.encode("utf-8")) > 3 * BINARY_PROBE
    path = tmp_path / name
    opener = gzip.open if name.endswith(".gz") else open
    with opener(path, "wt", encoding="utf-8") as handle:
        handle.write(body)
    readable = fileio.ReadableFile(FileMetadata(str(path), path.stat().st_size), CompressionTypes.AUTO)
    read = list(ReadParagraphs().process(readable))
    assert [(line, text) for _, line, text in read] == list(enumerate(texts, start=1))
