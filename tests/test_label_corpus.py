"""``python -m lisa_tf label-corpus`` (lisa_tf.labelling.corpus): the Beam pipeline writes, on real EWT
text, the frames ``predict --format jsonl`` writes; the same command writes the same files whatever the
number of workers, and never reads its own output back; blank lines are counted, not written; bad input
becomes dead letters with reasons, never lost; an output location that cannot be written is refused
before any work."""

import gzip
import json
import pathlib
import shutil

import pytest

from benchmarks.label_corpus import score_difference, without_scores
from benchmarks.raw_text_srl import texts_of
from lisa_tf_cli.main import main

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


def _dead_letters(prefix: pathlib.Path) -> list[dict]:
    return [json.loads(line) for path in sorted(prefix.parent.glob(prefix.name + "-dead-letters-*-of-*.jsonl"))
            for line in path.read_text(encoding="utf-8").splitlines()]


def test_frames_equal_predict_and_do_not_depend_on_the_workers(corpus, tmp_path, capsys):
    """Two workers, then one, over ``DIR/*`` with the output in ``DIR``: the second run reads the text
    files only (not the first run's shards) and writes the same bytes."""
    directory = tmp_path / "in"
    shutil.copytree(corpus, directory)
    prefix = directory / "frames"
    command = ["label-corpus", "--model", MODEL, "--input", str(directory / "*"), "--output", str(prefix),
               "--shard-bytes", "600"]
    assert main([*command, "--direct_num_workers", "2", "--direct_running_mode", "multi_processing"]) == 0
    report = capsys.readouterr().err
    records = _records(prefix)
    first = _shards(prefix)
    shards = len([name for name in first if "dead" not in name])
    assert shards >= 3 and sorted(first) == sorted(
        [f"frames-{k:05d}-of-{shards:05d}.jsonl" for k in range(shards)]
        + [f"frames-dead-letters-{k:05d}-of-{shards:05d}.jsonl" for k in range(shards)])
    assert _dead_letters(prefix) == []

    # predict --format jsonl on each file (decompressed: predict reads plain text)
    plain = tmp_path / "b.txt"
    plain.write_bytes(gzip.decompress((corpus / "b.txt.gz").read_bytes()))
    expected = {}
    for name, path in (("a.txt", corpus / "a.txt"), ("b.txt.gz", plain)):
        out = tmp_path / f"{name}.jsonl"
        assert main(["predict", "--model", MODEL, "--input", str(path), "--format", "jsonl", "--out", str(out)]) == 0
        for line in out.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if record["tokens"]:  # predict writes an empty record for a blank line; label-corpus counts it
                expected.setdefault((name, record["line"]), []).append(record)
    # the shards in name order are the records sorted by (file, line)
    keys = [(r["source"], r["line"]) for r in records]
    assert keys == sorted(keys)
    got = {}
    for record in records:
        got.setdefault((pathlib.Path(record.pop("source")).name, record["line"]), []).append(record)
    # the same frames; a score (a float32 mean) may move in its last digit with the batch a sentence is in
    assert without_scores(got) == without_scores(expected) and score_difference(got, expected) <= 2e-4
    assert len(got) == 36 and all(r["tokens"] for v in got.values() for r in v)
    counters = _counters(report)
    assert counters["documents"] == 2 and counters["empty"] == 2 and counters["lines"] == 38
    assert counters["sentences"] == sum(len(v) for v in got.values()) and counters["dead letters"] == 0
    assert counters["tokens"] == sum(len(r["tokens"]) for v in got.values() for r in v)
    assert counters["earlier output"] == 0

    # the same command again, in one process: the first run's files are not input, the bytes the same
    assert main(command) == 0
    counters = _counters(capsys.readouterr().err)
    assert counters["documents"] == 2 and counters["earlier output"] == 2 * shards and counters["lines"] == 38
    assert _shards(prefix) == first


def test_a_gz_of_newlines_writes_nothing(tmp_path, capsys):
    """A 200 kB ``.gz`` that expands to 200,000 blank lines around two sentences: two records, the
    blank lines counted."""
    texts = texts_of(TEST_TEXT)[:2]
    directory = tmp_path / "in"
    directory.mkdir()
    with gzip.open(directory / "blank.txt.gz", "wt", encoding="utf-8") as handle:
        handle.write("\n" * 100_000 + texts[0] + "\n" + "\n" * 100_000 + texts[1] + "\n")
    prefix = tmp_path / "out" / "frames"
    assert main(["label-corpus", "--model", MODEL, "--input", str(directory / "*"), "--output", str(prefix)]) == 0
    counters = _counters(capsys.readouterr().err)
    assert counters["empty"] == 200_000 and counters["lines"] == 200_002 and counters["sentences"] >= 2
    records = _records(prefix)
    assert [r["line"] for r in records] == sorted(r["line"] for r in records)
    assert {r["line"] for r in records} == {100_001, 200_002} and all(r["tokens"] for r in records)
    assert sum(p.stat().st_size for p in prefix.parent.iterdir()) < 20_000


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
    dead = _dead_letters(out)
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
    assert main(["label-corpus", "--model", MODEL, "--input", str(corpus / "a.txt"), "--output", str(tmp_path / "o"),
                 "--frames", str(tmp_path / "frames.json.gz")]) == 2
    assert capsys.readouterr().err.strip() == (f"error: --frames {tmp_path / 'frames.json.gz'}: no such file; expected a "
                                               "frame index (frames.json.gz, built with python -m data_pipeline."
                                               "frame_index build FRAMES_DIR --out PATH ...)")


def test_an_output_under_a_file_is_refused_before_any_work(corpus, tmp_path, capsys):
    """One line naming the option and the file in the way, exit 2, before Beam or TensorFlow (well
    under the seconds either takes to import)."""
    import time

    (tmp_path / "plain").write_text("a file\n")
    started = time.perf_counter()
    assert main(["label-corpus", "--model", MODEL, "--input", str(corpus / "a.txt"),
                 "--output", str(tmp_path / "plain" / "sub" / "o")]) == 2
    assert time.perf_counter() - started < 1.0
    error = capsys.readouterr().err.strip()
    assert error == (f"error: --output {tmp_path / 'plain' / 'sub' / 'o'}: {tmp_path / 'plain'} is a file, not a "
                     "directory; expected a prefix under a directory that exists or can be created")
    assert main(["label-corpus", "--input", str(corpus / "a.txt"), "--output", str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip().startswith(f"error: --output {tmp_path}: a directory; expected a prefix")
    # a pattern that matches only an earlier run's output: nothing to label
    (tmp_path / "o-00000-of-00001.jsonl").write_text("")
    assert main(["label-corpus", "--input", str(tmp_path / "o-*"), "--output", str(tmp_path / "o")]) == 2
    assert "matches only the output files of --output" in capsys.readouterr().err


def test_output_reached_through_a_link_is_not_input(tmp_path, capsys):
    """``--input 'LINK/*'`` where LINK links to the directory of ``--output DIR/o``: the earlier run's
    shards it matches are the output's, by another name, and are not read (here: nothing else to label)."""
    directory = tmp_path / "out"
    directory.mkdir()
    for name in ("o-00000-of-00001.jsonl", "o-dead-letters-00000-of-00001.jsonl"):
        (directory / name).write_text('{"source": "a.txt", "line": 1, "text": "The dog barked."}\n')
    link = tmp_path / "link"
    link.symlink_to(directory, target_is_directory=True)
    pattern, prefix = str(link / "*"), str(directory / "o")
    assert main(["label-corpus", "--model", MODEL, "--input", pattern, "--output", prefix]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"error: --input {pattern}: matches only the output files of --output {prefix} (never read as input); "
        "expected text files"]


def test_an_output_that_cannot_be_created_is_refused_and_nothing_is_left(corpus, tmp_path, capsys):
    """The output directory is tried before any work (made and written in); the directories made for
    that are gone when a later check refuses the command."""
    assert main(["label-corpus", "--input", str(corpus / "a.txt"), "--output", "/proc/lisa_tf_output/o"]) == 2
    assert capsys.readouterr().err.strip().startswith("error: --output /proc/lisa_tf_output/o: cannot create "
                                                      "/proc/lisa_tf_output (")
    prefix = tmp_path / "new" / "deeper" / "o"
    assert main(["label-corpus", "--input", str(tmp_path / "missing.txt"), "--output", str(prefix)]) == 2
    assert capsys.readouterr().err.strip() == (f"error: --input {tmp_path / 'missing.txt'}: no file matches; "
                                               "expected a file or a glob of text files")
    assert not (tmp_path / "new").exists()


def test_own_output_files_are_recognised(tmp_path):
    from lisa_tf.labelling.corpus import is_output

    prefix = str(tmp_path / "o")
    for name in ("o-00000-of-00004.jsonl", "o-dead-letters-00003-of-00004.jsonl", "o-00001-of-00004.jsonl.tmp",
                 "o-123456-of-200000.jsonl"):
        assert is_output(str(tmp_path / name), prefix), name
    for name in ("o.txt", "o-notes.jsonl", "other-00000-of-00004.jsonl", "o-00000-of-00004.jsonl.gz"):
        assert not is_output(str(tmp_path / name), prefix), name
    assert is_output("o-00000-of-00001.jsonl", str(pathlib.Path.cwd() / "o"))  # relative and absolute alike
    # the output directory by another name, a symbolic link to it, either way round
    link = tmp_path / "link"
    link.symlink_to(tmp_path, target_is_directory=True)
    assert is_output(str(link / "o-00000-of-00004.jsonl"), prefix)
    assert is_output(str(tmp_path / "o-dead-letters-00000-of-00004.jsonl"), str(link / "o"))
    assert not is_output(str(link / "o-notes.jsonl"), prefix)


@pytest.mark.parametrize("name", ["long.txt", "long.txt.gz"])
def test_blocks_cover_the_file_line_for_line(tmp_path, name):
    """A file longer than the binary probe (lisa_tf.labelling.corpus.BINARY_PROBE), cut into blocks of
    about 2 kB at line ends: each block holds whole lines, and the blocks' lines, read as the workers
    read them, are the file's lines in order with their numbers; the plan is the same every time."""
    from lisa_tf.labelling.corpus import BINARY_PROBE, LabelBlock, plan_blocks

    texts = texts_of(TEST_TEXT)[:300]
    body = "\n".join(texts) + "\n"
    assert len(body.encode("utf-8")) > 3 * BINARY_PROBE
    path = tmp_path / name
    opener = gzip.open if name.endswith(".gz") else open
    with opener(path, "wt", encoding="utf-8") as handle:
        handle.write(body)

    def plan():
        with opener(path, "rb") as handle:
            return plan_blocks(handle, str(path), 2048)

    blocks = plan()
    assert blocks == plan() and len(blocks) > 5
    assert [b.offset for b in blocks] == [0] + [b.offset + b.size for b in blocks[:-1]]
    assert blocks[-1].offset + blocks[-1].size == len(body.encode("utf-8"))
    longest = max(len(t.encode("utf-8")) for t in texts) + 1
    assert all(2048 <= b.size < 2048 + longest for b in blocks[:-1])
    reader = LabelBlock(str(tmp_path / "o"), "unused", 1, 1)
    read = []
    for block in blocks:
        counts = {"lines": 0, "empty": 0}
        read += [(line, text) for _, text, _, _, line in reader._lines(block, counts)]
        assert counts["lines"] == body.encode("utf-8")[block.offset:block.offset + block.size].count(b"\n")
    assert read == list(enumerate(texts, start=1))
