"""The files of a run survive a kill at any moment: training writes each beside its target and
renames it into place, so a kill leaves the old file or the new one, never a truncated
``done.json`` or a 0-byte ``model.keras``. A damaged ``done.json`` counts as "not finished" (with a
warning naming it); a damaged ``model.keras`` is one ``error:`` line naming it."""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import sys

from lisa_tf.training import loop
from lisa_tf.util.atomic_files import PARTIAL
from tests.test_cli_errors import one_error
from tests.training.conftest import quick_config

_watched: list = []  # (run directory, paths opened for writing there) while a test watches


def _audit(event, args):
    if event != "open" or not _watched:
        return
    path, mode, flags = args
    if not isinstance(path, (str, bytes, os.PathLike)):
        return
    writing = any(c in mode for c in "wax+") if mode else bool(flags & (os.O_WRONLY | os.O_RDWR))
    if writing:
        directory, written = _watched[-1]
        path = pathlib.Path(os.fsdecode(path)).absolute()
        if directory in path.parents:
            written.append(path.relative_to(directory))


sys.addaudithook(_audit)  # audit hooks cannot be removed: it does nothing unless a test watches


@contextlib.contextmanager
def _writes(directory: pathlib.Path):
    """The files opened for writing in ``directory`` from Python (not by h5py's or TensorFlow's
    C code) while the block runs."""
    written: list = []
    _watched.append((directory.absolute(), written))
    try:
        yield written
    finally:
        _watched.pop()


def test_training_writes_every_file_beside_its_target(tmp_path, read_once):
    run = tmp_path / "run"
    with _writes(run) as written:
        loop.train(quick_config(2, **{"train.keep_weights": 1}), run, verbose=0)
    direct = [str(p) for p in written if not any(part.startswith(PARTIAL) for part in p.parts)]
    assert written and not direct  # config.json, vocab/, metrics.jsonl, curves.png, model.keras, done.json
    assert {p.parts[0].split(".")[-1] for p in written} >= {"json", "vocab", "jsonl", "png", "keras"}
    assert not [p for p in run.rglob(f"{PARTIAL}*")]  # no scratch left


def test_a_damaged_done_json_counts_as_not_finished(tmp_path, capsys, read_once):
    run = tmp_path / "run"
    loop.train(quick_config(2), run, verbose=0)
    done = run / "done.json"
    done.write_text(done.read_text()[:20])  # cut short
    capsys.readouterr()
    summary = loop.train(quick_config(2), run, verbose=0)
    captured = capsys.readouterr()
    assert f"warning: {done}: cannot be read" in captured.err
    assert "resumed from checkpoint at step 2" in captured.out
    assert summary["steps"] == 2 and json.loads(done.read_text())["steps"] == 2
    assert [json.loads(line)["step"] for line in (run / "metrics.jsonl").read_text().splitlines()] == [1, 2]


def test_an_empty_or_cut_model_file_is_one_error_line(tmp_path, capsys, read_once):
    run = tmp_path / "run"
    loop.train(quick_config(1), run, verbose=0)
    model = run / "model.keras"
    whole = model.read_bytes()
    for content in (b"", whole[: len(whole) // 2]):
        model.write_bytes(content)
        capsys.readouterr()
        line = one_error(capsys, ["predict", "--model", run, "--tokenized", "The cat sat ."])
        assert line.startswith(f"error: {model}: not a readable .keras model file ({len(content)} bytes")
