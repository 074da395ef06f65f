"""``train.max_minutes``: training stops at the last evaluation that leaves no room for another interval."""

from __future__ import annotations

import json

import keras

from lisa_tf.config import load_config
from lisa_tf.training import callbacks
from lisa_tf.training.callbacks import TimeBudget
from lisa_tf.training.loop import train
from tests.models.conftest import tiny_overrides


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def test_stops_when_the_next_interval_would_overrun(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(callbacks.time, "time", clock)
    budget = TimeBudget(minutes=1.0)
    budget.set_model(keras.Sequential([keras.layers.Dense(1)]))
    budget.model.stop_training = False
    budget.on_train_begin()
    clock.now += 25  # 25 s: another 25-s interval ends at 50 s, inside 60 s
    budget.on_epoch_end(0)
    assert not budget.model.stop_training and not budget.stopped
    clock.now += 25  # 50 s: another interval would end at 75 s
    budget.on_epoch_end(1)
    assert budget.model.stop_training and budget.stopped


def test_train_records_the_budget_stop(tmp_path):
    overrides = tiny_overrides(**{"model.kind": "deepatt", "train.max_steps": 60, "train.eval_every": 20,
                                  "train.keep_weights": 0, "train.max_minutes": 1e-4})
    summary = train(load_config(None, overrides), tmp_path / "run", verbose=0)
    assert summary["stopped_at_time_budget"] and summary["steps"] == 20  # stopped after the first evaluation
    assert json.loads((tmp_path / "run" / "done.json").read_text())["stopped_at_time_budget"]
    assert len((tmp_path / "run" / "metrics.jsonl").read_text().splitlines()) == 1
