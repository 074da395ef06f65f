"""Training survives being stopped at any moment: a kill during an evaluation, a damaged newest
checkpoint, a deleted checkpoint directory. Every evaluation stays in ``metrics.jsonl`` exactly once
and no checkpointed interval is trained again."""

from __future__ import annotations

import json
import shutil

import pytest

from lisa_tf.config import load_config
from lisa_tf.training import loop
from lisa_tf.training.checkpoints import step_files
from tests.models.conftest import tiny_overrides


def _config(steps: int, **extra):
    return load_config(None, tiny_overrides(**{"model.kind": "deepatt", "model.predicate_identifier_layers": 0,
                                               "train.max_steps": steps, "train.eval_every": 2,
                                               "train.keep_weights": 0, **extra}))


def _steps(run):
    return [json.loads(line)["step"] for line in (run / "metrics.jsonl").read_text().splitlines()]


class Killed(BaseException):
    """Stands for the process dying (not an Exception, so nothing on the way catches it)."""


def test_a_kill_during_an_evaluation_is_redone_on_resume(tmp_path, capsys, monkeypatch):
    run = tmp_path / "run"
    real_score = loop.score
    calls = []

    def dying_score(gold, predicted):
        calls.append(1)
        if len(calls) == 2:  # the evaluation of step 4
            raise Killed()
        return real_score(gold, predicted)

    monkeypatch.setattr(loop, "score", dying_score)
    with pytest.raises(Killed):
        loop.train(_config(6), run, verbose=0)
    assert _steps(run) == [2]
    assert [p.name for p in step_files(run / "checkpoints")] == ["step-2.weights.h5", "step-4.weights.h5"]
    monkeypatch.setattr(loop, "score", real_score)
    capsys.readouterr()
    summary = loop.train(_config(6), run, verbose=0)
    out = capsys.readouterr().out
    assert "resumed from checkpoint at step 4" in out  # the interval 2→4 is not trained again
    assert "step 4: evaluating the checkpoint" in out
    assert _steps(run) == [2, 4, 6]
    assert summary["steps"] == 6
    records = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    best = max(records, key=lambda r: r["dev_f1"])
    assert json.loads((run / "best" / "step.json").read_text())["step"] == best["step"]
    assert records[1]["loss"] == records[1]["loss"]  # the redone record keeps its interval's loss (not NaN)


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A finished 4-step run (evaluations at steps 2 and 4); tests change copies of it."""
    run = tmp_path_factory.mktemp("finished") / "run"
    loop.train(_config(4), run, verbose=0)
    return run


def test_a_damaged_checkpoint_falls_back_to_the_one_before(finished, tmp_path, capsys):
    run = shutil.copytree(finished, tmp_path / "run")
    newest = run / "checkpoints" / "step-4.weights.h5"
    newest.write_bytes(newest.read_bytes()[:1000])  # cut short
    capsys.readouterr()
    assert loop.train(_config(6), run, verbose=0)["steps"] == 6
    captured = capsys.readouterr()
    assert f"warning: {newest}: cannot read this checkpoint" in captured.err
    assert "falling back to step-2.weights.h5" in captured.err
    assert "resumed from checkpoint at step 2" in captured.out
    assert _steps(run) == [2, 4, 6]  # step 4 evaluated again, recorded once


def test_deleted_checkpoints_and_a_cut_metrics_line_restart_without_repeats(finished, tmp_path):
    run = shutil.copytree(finished, tmp_path / "run")
    shutil.rmtree(run / "checkpoints")
    (run / "done.json").unlink()
    text = (run / "metrics.jsonl").read_text()
    (run / "metrics.jsonl").write_text(text[: text.rindex("{") + 20])  # step 4's line half written
    loop.train(_config(4), run, verbose=0)
    assert _steps(run) == [2, 4]
