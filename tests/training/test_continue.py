"""A finished run given a larger ``train.max_steps`` continues from its checkpoint instead of
starting over; the same ``max_steps`` again does nothing."""

from __future__ import annotations

import json

from lisa_tf.config import load_config
from lisa_tf.training.loop import train
from tests.models.conftest import tiny_overrides


def _config(steps: int):
    return load_config(None, tiny_overrides(**{"model.kind": "deepatt", "train.max_steps": steps,
                                               "train.eval_every": 20, "train.keep_weights": 0}))


def test_larger_max_steps_continues_a_finished_run(tmp_path, capsys):
    run = tmp_path / "run"
    assert train(_config(20), run, verbose=0)["steps"] == 20
    summary = train(_config(40), run, verbose=0)
    assert summary["steps"] == 40
    assert "resumed from checkpoint at step 20" in capsys.readouterr().out
    steps = [json.loads(line)["step"] for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert steps == [20, 40]  # the first interval was not trained again
    assert train(_config(40), run, verbose=0)["steps"] == 40
    assert "nothing to do" in capsys.readouterr().out
    assert len((run / "metrics.jsonl").read_text().splitlines()) == 2
