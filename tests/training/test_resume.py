"""Stopping and resuming a run.

A run stopped and resumed trains on the same batches, step for step, as one that ran without a
stop: the checkpoints hold the position in the training data, and the resumed run reads on from it.
With the states of the dropout seed generators restored as well, the resumed run's per-step losses
and final weights (optimiser state included) are those of the uninterrupted run to the last bit.
Training ends at exactly ``train.max_steps``; a continuation of a finished run leaves it as it was
until the continuation has written its first checkpoint."""

from __future__ import annotations

import json
import random
import time

import h5py
import numpy as np
import pytest

from lisa_tf.training import loop
from lisa_tf.training.checkpoints import DATA_POSITION, step_files
from lisa_tf.training.curves import read_metrics, training_seconds
from lisa_tf.training.progress import StepProgress
from tests.training.conftest import quick_config

STEPS = 8


def _losses(run):
    return [(r["step"], r["loss"]) for r in map(json.loads, (run / "metrics.jsonl").read_text().splitlines())]


def _tensors(path):
    found = {}
    with h5py.File(path) as handle:
        handle.visititems(lambda name, item: found.__setitem__(name, item[()]) if isinstance(item, h5py.Dataset) else None)
    return found


class Killed(BaseException):
    """Stands for the process dying (not an Exception, so nothing on the way catches it)."""


def _kill_after(monkeypatch, step: int) -> None:
    """Make the next training session die as soon as it has trained past ``step`` (mid-interval:
    the step after is trained, not checkpointed)."""

    class Dying(StepProgress):
        def on_train_batch_end(self, batch, logs=None):
            super().on_train_batch_end(batch, logs)
            if int(self.model.optimizer.iterations.numpy()) > step:
                monkeypatch.setattr(loop, "StepProgress", StepProgress)
                raise Killed()

    monkeypatch.setattr(loop, "StepProgress", Dying)


def _newest_checkpoint(run) -> int:
    return int(step_files(run / "checkpoints")[-1].name[len("step-"):-len(".weights.h5")])


@pytest.mark.slow(minutes=1.0)
def test_a_run_stopped_three_times_trains_as_the_uninterrupted_run(tmp_path, monkeypatch, read_once):
    whole = tmp_path / "uninterrupted"
    loop.train(quick_config(STEPS), whole, verbose=0)

    first, killed, third = stops = sorted(random.Random(32).sample(range(1, STEPS), 3))
    run = tmp_path / "stopped"
    started = time.time()
    loop.train(quick_config(first), run, verbose=0)  # finishes at `first`; the next session continues it
    _kill_after(monkeypatch, killed)
    with pytest.raises(Killed):
        loop.train(quick_config(STEPS), run, verbose=0)
    assert _newest_checkpoint(run) == killed
    loop.train(quick_config(third), run, verbose=0)
    loop.train(quick_config(STEPS), run, verbose=0)
    wall = time.time() - started

    expected, got = _losses(whole), _losses(run)
    print(f"stopped at steps {stops} (at the second by a kill one step later)")
    print(f"uninterrupted: {expected}")
    print(f"resumed:       {got}")
    assert [s for s, _ in expected] == list(range(1, STEPS + 1))
    assert got == expected  # floats compared exactly
    final, resumed = _tensors(whole / "final.weights.h5"), _tensors(run / "final.weights.h5")
    assert final.keys() == resumed.keys() and any(k.startswith("optimizer") for k in final)
    assert all(np.array_equal(final[k], resumed[k]) for k in final)
    with h5py.File(step_files(run / "checkpoints")[-1]) as checkpoint:
        assert checkpoint.attrs[DATA_POSITION] == STEPS  # one batch a step
    # the run's training time counts its four sessions: it never goes back, and ends above the last session's time
    records = read_metrics(run / "metrics.jsonl")
    seconds = [record["run_seconds"] for record in records]
    assert seconds == sorted(seconds) and records[-1]["seconds"] < seconds[-1] <= wall, (records, wall)
    assert training_seconds(records) == seconds[-1]
    # a run whose earlier sessions' records predate run_seconds: each session's last record, then the clock
    legacy = [{"step": 1, "seconds": 50.0}, {"step": 2, "seconds": 90.0}, {"step": 3, "seconds": 30.0}]
    assert training_seconds(legacy) == 120.0
    assert training_seconds(legacy + [{"step": 4, "seconds": 20.0, "run_seconds": 140.0}]) == 140.0


def test_training_stops_at_exactly_max_steps(tmp_path, capsys, read_once):
    summary = loop.train(quick_config(5, **{"train.eval_every": 2}), tmp_path / "run", verbose=0)
    assert summary["steps"] == 5
    assert [s for s, _ in _losses(tmp_path / "run")] == [2, 4, 5]  # the last interval is shorter, and evaluated
    assert _newest_checkpoint(tmp_path / "run") == 5
    assert "starting at step 0 of 5" in capsys.readouterr().out
    summary = loop.train(quick_config(2, **{"train.eval_every": 1000}), tmp_path / "short", verbose=0)
    assert summary["steps"] == 2 and [s for s, _ in _losses(tmp_path / "short")] == [2]


def test_a_continuation_leaves_the_finished_run_as_it_was_until_its_first_checkpoint(tmp_path, monkeypatch,
                                                                                      read_once):
    run = tmp_path / "run"
    loop.train(quick_config(2), run, verbose=0)
    names = ("done.json", "config.json", "model.keras", "final.weights.h5", "metrics.jsonl")
    finished = {name: (run / name).read_bytes() for name in names}
    _kill_after(monkeypatch, 2)  # dies in its first interval
    with pytest.raises(Killed):
        loop.train(quick_config(4), run, verbose=0)
    assert {name: (run / name).read_bytes() for name in names} == finished
    _kill_after(monkeypatch, 3)  # dies after its first checkpoint (step 3)
    with pytest.raises(Killed):
        loop.train(quick_config(4), run, verbose=0)
    assert not (run / "done.json").exists()  # no longer finished: resuming it continues from step 3
    assert json.loads((run / "config.json").read_text())["train"]["max_steps"] == 4
    assert loop.train(quick_config(4), run, verbose=0)["steps"] == 4
    assert [s for s, _ in _losses(run)] == [1, 2, 3, 4]
