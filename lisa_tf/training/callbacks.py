"""Keras callbacks of the training loop: periodic dev evaluation, best checkpoint, early stopping, a
wall-clock budget.

The loop runs ``model.fit`` with one "epoch" per evaluation interval (``train.eval_every`` steps), so
Keras' own ``BackupAndRestore`` checkpoints at every evaluation and a killed run resumes from there
with the same step and optimiser state.
"""

from __future__ import annotations

import json
import pathlib
import time
from typing import Callable

import keras

from lisa_tf.training.curves import plot_curves, read_metrics


class DevEvaluation(keras.callbacks.Callback):
    """Score the dev set after every interval; keep the best weights; stop after ``patience`` misses.

    Args:
        evaluate: returns a dict with at least ``precision``, ``recall``, ``f1`` (SRL, scorer's numbers).
        run_dir: where ``metrics.jsonl``, ``best/`` and ``curves.png`` go.
        patience: evaluations without a new best dev F1 before stopping; 0 = never stop early.
        write: False on non-chief workers of a multi-worker run.
        keep_weights: keep the weights of the latest this many evaluations in ``weights/step-N.weights.h5``
            (the inputs of checkpoint averaging); 0 = keep none.
    """

    def __init__(self, evaluate: Callable[[], dict], run_dir, patience: int = 0, write: bool = True,
                 keep_weights: int = 0):
        super().__init__()
        self.evaluate = evaluate
        self.run_dir = pathlib.Path(run_dir)
        self.patience = patience
        self.write = write
        self.metrics_path = self.run_dir / "metrics.jsonl"
        self.best_path = self.run_dir / "best" / "model.weights.h5"
        self.keep_weights = keep_weights
        self._started = time.time()
        #: every evaluation of the run so far (read back from metrics.jsonl when resuming)
        self.records: list[dict] = []
        #: True once patience ran out in this session
        self.stopped_early = False

    def on_train_begin(self, logs=None):
        self.records = read_metrics(self.metrics_path) if self.write else []

    def _history(self):
        records = list(self.records)
        best = max((r["dev_f1"] for r in records), default=float("-inf"))
        since = 0
        for record in records:
            since = 0 if record["dev_f1"] >= best else since + 1
        return records, best, since

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        step = int(self.model.optimizer.iterations.numpy())
        scores = self.evaluate()
        records, best, since = self._history()
        record = {
            "step": step,
            "loss": float(logs.get("loss", float("nan"))),
            "dev_precision": scores["precision"],
            "dev_recall": scores["recall"],
            "dev_f1": scores["f1"],
            "seconds": round(time.time() - self._started, 1),
        }
        record.update({f"dev_{k}": v for k, v in scores.items() if k not in ("precision", "recall", "f1")})
        improved = record["dev_f1"] > best
        print(f"\nstep {step}: loss {record['loss']:.4f}  dev P {scores['precision']:.2f} R {scores['recall']:.2f} "
              f"F1 {scores['f1']:.2f}{'  (best)' if improved else ''}", flush=True)
        self.records.append(record)
        if self.write:
            with open(self.metrics_path, "a") as handle:
                handle.write(json.dumps(record) + "\n")
            if improved:
                self.best_path.parent.mkdir(parents=True, exist_ok=True)
                self.model.save_weights(self.best_path)
                (self.best_path.parent / "step.json").write_text(json.dumps({"step": step, "dev_f1": record["dev_f1"]}))
            self._keep(step)
            plot_curves(self.records, self.run_dir / "curves.png", title=self.run_dir.name)
        since = 0 if improved else since + 1
        if self.patience and since >= self.patience:
            print(f"early stopping: no dev F1 improvement in {since} evaluations", flush=True)
            self.model.stop_training = True
            self.stopped_early = True


    def _keep(self, step: int) -> None:
        """Save this evaluation's weights; delete the ones older than the latest ``keep_weights``."""
        if not self.keep_weights:
            return
        directory = self.run_dir / "weights"
        directory.mkdir(exist_ok=True)
        self.model.save_weights(directory / f"step-{step}.weights.h5")
        for old in step_weight_files(directory)[: -self.keep_weights]:
            old.unlink()


class TimeBudget(keras.callbacks.Callback):
    """Stop training at the last evaluation after which another interval would overrun ``minutes``.

    The interval's duration is the mean so far in this session (training and evaluation together), so
    the session ends within the budget unless an interval runs much slower than the ones before it.

    Args:
        minutes: wall-clock budget of this session (``train.max_minutes``).
    """

    def __init__(self, minutes: float):
        super().__init__()
        self.minutes = minutes
        #: True once the budget stopped this session
        self.stopped = False

    def on_train_begin(self, logs=None):
        self._started, self._intervals = time.time(), 0

    def on_epoch_end(self, epoch, logs=None):
        self._intervals += 1
        elapsed = time.time() - self._started
        if elapsed + elapsed / self._intervals > 60.0 * self.minutes:
            print(f"time budget: {elapsed / 60:.1f} min used of {self.minutes:g}, no room for another interval; "
                  "stopping", flush=True)
            self.model.stop_training = True
            self.stopped = True


def step_weight_files(directory) -> list[pathlib.Path]:
    """The ``step-N.weights.h5`` files of ``directory``, oldest step first."""
    files = pathlib.Path(directory).glob("step-*.weights.h5")
    return sorted(files, key=lambda p: int(p.name[len("step-"):-len(".weights.h5")]))


class ResumeReport(keras.callbacks.Callback):
    """Says where training starts: step 0, or the step ``BackupAndRestore`` restored (it must come
    after ``BackupAndRestore`` in the callback list)."""

    def on_train_begin(self, logs=None):
        step = int(self.model.optimizer.iterations.numpy())
        print("starting at step 0" if step == 0 else f"resumed from checkpoint at step {step}", flush=True)
