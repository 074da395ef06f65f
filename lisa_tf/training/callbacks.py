"""Keras callbacks of the training loop: periodic dev evaluation, best checkpoint, early stopping, a
wall-clock budget.

The loop runs ``model.fit`` with one "epoch" per evaluation interval (``train.eval_every`` steps).
At the end of each interval :class:`~lisa_tf.training.checkpoints.IntervalCheckpoint` writes the
checkpoint first, then :class:`DevEvaluation` scores dev and writes ``best/``, ``weights/`` and,
last, the interval's line in ``metrics.jsonl``; that line is what marks the interval as finished.
A run killed at any moment therefore resumes from its newest checkpoint and
:meth:`DevEvaluation.resume` redoes the evaluation that the kill interrupted, so every evaluation
is in ``metrics.jsonl`` exactly once and ``best/`` is chosen over all of them.
"""

from __future__ import annotations

import json
import pathlib
import shutil
import time
from typing import Callable

import keras

from lisa_tf.training.checkpoints import interval_logs, save_weights_whole, step_files as step_weight_files
from lisa_tf.training.curves import plot_curves, read_metrics, training_seconds
from lisa_tf.util.atomic_files import write_text


def _metrics_text(records: list[dict]) -> str:
    """``metrics.jsonl``: one JSON line per evaluation (rewritten whole after each, a few hundred
    lines at most, so a kill never leaves a line cut short)."""
    return "".join(json.dumps(r) + "\n" for r in records)


class DevEvaluation(keras.callbacks.Callback):
    """Score the dev set after every interval; keep the best weights; stop after ``patience`` misses.

    Args:
        evaluate: returns a dict with at least ``precision``, ``recall``, ``f1`` (SRL, scorer's numbers).
        run_dir: where ``metrics.jsonl``, ``best/`` and ``curves.png`` go.
        patience: evaluations without a new best dev F1 before stopping; 0 = never stop early.
        write: False on non-chief workers of a multi-worker run.
        keep_weights: keep the weights of the latest this many evaluations in ``weights/step-N.weights.h5``
            (the inputs of checkpoint averaging); 0 = keep none.
        report: prints one line (the evaluation's scores, warnings).
    """

    def __init__(self, evaluate: Callable[[], dict], run_dir, patience: int = 0, write: bool = True,
                 keep_weights: int = 0, report: Callable[[str], None] = print):
        super().__init__()
        self.evaluate = evaluate
        self.run_dir = pathlib.Path(run_dir)
        self.patience = patience
        self.write = write
        self.metrics_path = self.run_dir / "metrics.jsonl"
        self.best_path = self.run_dir / "best" / "model.weights.h5"
        self.keep_weights = keep_weights
        self.report = report
        self._started = time.time()
        self._before = 0.0
        #: every evaluation of the run so far, one per step (read back from metrics.jsonl when resuming)
        self.records: list[dict] = []
        #: True once patience ran out
        self.stopped_early = False

    def resume(self, model, step: int, start: bool = False) -> bool:
        """Bring the run's records in line with the checkpoint ``model`` was restored from (``step``;
        0 for a new run) and redo that step's evaluation if a kill interrupted it. ``start``: the
        run starts from a trained model (``train.init``), whose weights are evaluated as step 0, so
        the run keeps them when no step of training beats them.

        Records of later steps are dropped (those intervals are trained again), ``best/`` is
        forgotten if it came from one of them. Returns True when patience has already run out.
        """
        self.set_model(model)
        if not self.write:
            return False
        on_disk = read_metrics(self.metrics_path)
        self.records = [r for r in on_disk if r["step"] <= step]
        self._before = training_seconds(self.records)  # the earlier sessions' training time, up to the checkpoint
        dropped = len(on_disk) - len(self.records)
        if dropped:
            self.report(f"warning: {self.metrics_path}: {dropped} evaluation(s) after step {step} dropped; "
                        f"training resumes from the checkpoint at step {step}")
        expected = _metrics_text(self.records)
        if self.metrics_path.exists() and self.metrics_path.read_text() != expected:
            write_text(self.metrics_path, expected)  # also ends a line cut short by a kill
        best = self._best_marker()
        if best is not None and best[0] > step:
            shutil.rmtree(self.best_path.parent)
        if step and step not in {r["step"] for r in self.records}:
            self.report(f"step {step}: evaluating the checkpoint (the run stopped before its evaluation)")
            self._record(step, interval_logs(self.run_dir / "checkpoints", step))
        elif start and not self.records:  # a run from a model starts at step 0 (no checkpoint yet)
            self._record(0, {})  # the starting model's scores: the run's first best
        return self.stopped_early

    def _best_marker(self):
        """``(step, dev_f1)`` of the weights in ``best/``, or None when there are none (or no readable marker)."""
        marker = self.best_path.parent / "step.json"
        if not (marker.exists() and self.best_path.exists()):
            return None
        try:
            saved = json.loads(marker.read_text())
            return int(saved["step"]), float(saved["dev_f1"])
        except (ValueError, KeyError, TypeError):
            return None

    def on_epoch_end(self, epoch, logs=None):
        self._record(int(self.model.optimizer.iterations.numpy()), logs or {})

    def _record(self, step: int, logs: dict) -> None:
        """Evaluate the current weights as those of ``step``; write best/, weights/, then metrics."""
        scores = self.evaluate()
        best = max((r["dev_f1"] for r in self.records), default=float("-inf"))
        since = 0
        for record in self.records:
            since = 0 if record["dev_f1"] >= best else since + 1
        record = {
            "step": step,
            "loss": float(logs.get("loss", float("nan"))),
            "dev_precision": scores["precision"],
            "dev_recall": scores["recall"],
            "dev_f1": scores["f1"],
            "seconds": round(time.time() - self._started, 1),  # this session's
            "run_seconds": round(self._before + time.time() - self._started, 1),  # the run's, over all its sessions
        }
        record.update({f"dev_{k}": v for k, v in scores.items() if k not in ("precision", "recall", "f1", "per_role")})
        improved = record["dev_f1"] > best
        trained = f"loss {record['loss']:.4f}" if step else "the starting model"
        self.report(f"step {step}: {trained}  dev P {scores['precision']:.2f} "
                    f"R {scores['recall']:.2f} F1 {scores['f1']:.2f}{'  (best)' if improved else ''}")
        self.records.append(record)
        if self.write:
            saved = self._best_marker()
            if saved is None or record["dev_f1"] > saved[1]:
                self.best_path.parent.mkdir(parents=True, exist_ok=True)
                save_weights_whole(self.model, self.best_path)
                write_text(self.best_path.parent / "step.json", json.dumps({"step": step, "dev_f1": record["dev_f1"]}))
            self._keep(step)
            plot_curves(self.records, self.run_dir / "curves.png", title=self.run_dir.name)
            write_text(self.metrics_path, _metrics_text(self.records))  # last: the line marks the interval as finished
        since = 0 if improved else since + 1
        if self.patience and since >= self.patience:
            self.report(f"early stopping: no dev F1 improvement in {since} evaluations")
            self.model.stop_training = True
            self.stopped_early = True

    def _keep(self, step: int) -> None:
        """Save this evaluation's weights; delete the ones older than the latest ``keep_weights``."""
        if not self.keep_weights:
            return
        directory = self.run_dir / "weights"
        directory.mkdir(exist_ok=True)
        save_weights_whole(self.model, directory / f"step-{step}.weights.h5")
        for old in step_weight_files(directory)[: -self.keep_weights]:
            old.unlink()


class TimeBudget(keras.callbacks.Callback):
    """Stop training at the last evaluation after which another interval would overrun ``minutes``.

    The interval's duration is the mean so far in this session (training and evaluation together), so
    the session ends within the budget unless an interval runs much slower than the ones before it.

    Args:
        minutes: wall-clock budget of this session (``train.max_minutes``).
        report: prints one line.
    """

    def __init__(self, minutes: float, report: Callable[[str], None] = print):
        super().__init__()
        self.minutes = minutes
        self.report = report
        #: True once the budget stopped this session
        self.stopped = False

    def on_train_begin(self, logs=None):
        self._started, self._intervals = time.time(), 0

    def on_epoch_end(self, epoch, logs=None):
        self._intervals += 1
        if self.model.stop_training:  # the run ends here anyway (max_steps, early stopping)
            return
        elapsed = time.time() - self._started
        if elapsed + elapsed / self._intervals > 60.0 * self.minutes:
            self.report(f"time budget: {elapsed / 60:.1f} min used of {self.minutes:g}, no room for another "
                        "interval; stopping")
            self.model.stop_training = True
            self.stopped = True



class StepLimit(keras.callbacks.Callback):
    """End training at exactly ``max_steps`` optimiser steps.

    ``fit`` runs whole "epochs" of ``train.eval_every`` batches; when ``max_steps`` is not a multiple
    of it, the interval that reaches ``max_steps`` ends there, shorter than the others, and still
    gets its checkpoint and evaluation (``fit`` calls ``on_epoch_end`` after a stop).
    """

    def __init__(self, max_steps: int):
        super().__init__()
        self.max_steps = max_steps

    def on_train_batch_end(self, batch, logs=None):
        if int(self.model.optimizer.iterations.numpy()) >= self.max_steps:
            self.model.stop_training = True
