"""Interval checkpoints that survive ``kill -9`` at any moment: the newest two are kept, each written
whole or not at all, and a checkpoint that cannot be read falls back to the one before it.

Keras' ``BackupAndRestore`` keeps one ``latest.weights.h5`` (and a copy it only uses when reading
raises ``OSError``); this module keeps ``checkpoints/step-N.weights.h5`` for the latest two
evaluation intervals instead, so a truncated or corrupt newest file costs one interval, and the step
is in the file name as well as in the optimiser state the file holds.

A checkpoint is written at the end of every interval *before* the dev evaluation; the evaluation's
record in ``metrics.jsonl`` is what marks the interval as finished, and
:class:`~lisa_tf.training.callbacks.DevEvaluation` redoes the evaluation of a restored step that
has no record (the run was killed while evaluating). See :mod:`lisa_tf.training.loop`.
"""

from __future__ import annotations

import json
import os
import pathlib
import sys

import keras

from data_pipeline.errors import UserError
from lisa_tf.atomic_files import partial_file, write_text
from lisa_tf.weights import load_weights, save_weights

PREFIX, SUFFIX = "step-", ".weights.h5"
KEEP = 2
#: the single checkpoint of runs written before checkpoints were numbered (Keras ``BackupAndRestore``)
LEGACY = "latest.weights.h5"


def step_files(directory: str | os.PathLike) -> list[pathlib.Path]:
    """The ``step-N.weights.h5`` files of ``directory``, oldest step first."""
    directory = pathlib.Path(directory)
    files = []
    for path in directory.glob(f"{PREFIX}*{SUFFIX}"):
        number = path.name[len(PREFIX):-len(SUFFIX)]
        if number.isdigit():
            files.append((int(number), path))
    return [path for _, path in sorted(files)]


def save_weights_whole(model: keras.Model, path: pathlib.Path) -> None:
    """:func:`lisa_tf.weights.save_weights` whole or not at all (written beside it, then renamed)."""
    with partial_file(path) as partial:
        save_weights(model, partial)


def save_checkpoint(model: keras.Model, directory: str | os.PathLike, step: int, keep: int = KEEP) -> pathlib.Path:
    """Write the weights and optimiser state of ``model`` as ``directory/step-{step}.weights.h5``
    (to a temporary name first, then renamed, so a killed write leaves no partial checkpoint) and
    delete all but the newest ``keep``."""
    directory = pathlib.Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{PREFIX}{step}{SUFFIX}"
    save_weights_whole(model, path)
    for old in step_files(directory)[:-keep]:
        old.unlink()
        _logs_file(old).unlink(missing_ok=True)
    return path


def _logs_file(checkpoint: pathlib.Path) -> pathlib.Path:
    return checkpoint.with_name(checkpoint.name[: -len(SUFFIX)] + ".logs.json")


def interval_logs(directory: str | os.PathLike, step: int) -> dict:
    """The training logs (e.g. mean loss) of the interval that ended with checkpoint ``step``; empty
    when they were not saved."""
    path = _logs_file(pathlib.Path(directory) / f"{PREFIX}{step}{SUFFIX}")
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


class IntervalCheckpoint(keras.callbacks.Callback):
    """Write a checkpoint (:func:`save_checkpoint`) and the interval's training logs at the end of
    every interval, before the callbacks after it in the list (the dev evaluation) run.

    Args:
        directory: the run's ``checkpoints/``.
        keep: how many checkpoints to keep (the newest).
    """

    def __init__(self, directory: str | os.PathLike, keep: int = KEEP):
        super().__init__()
        self.directory = pathlib.Path(directory)
        self.keep = keep

    def on_epoch_end(self, epoch, logs=None):
        step = int(self.model.optimizer.iterations.numpy())
        self.directory.mkdir(parents=True, exist_ok=True)
        logs_path = _logs_file(self.directory / f"{PREFIX}{step}{SUFFIX}")
        write_text(logs_path, json.dumps({k: float(v) for k, v in (logs or {}).items()}))
        save_checkpoint(self.model, self.directory, step, self.keep)


def restore_checkpoint(model: keras.Model, directory: str | os.PathLike) -> int:
    """Load the newest readable checkpoint of ``directory`` into ``model`` (weights and optimiser
    state) and return its step; 0 when there is none.

    A checkpoint that cannot be read is skipped with a warning naming it, and the one before it is
    tried.

    Raises:
        UserError: checkpoints exist but none can be read.
    """
    directory = pathlib.Path(directory)
    candidates = step_files(directory)[::-1]
    if (directory / LEGACY).exists():
        candidates.append(directory / LEGACY)
    if not candidates:
        return 0
    if model.optimizer is not None and not model.optimizer.built:
        model.optimizer.build(model.trainable_variables)  # its variables must exist to be loaded
    for index, path in enumerate(candidates):
        try:
            load_weights(model, path)
        except Exception as error:  # h5py and Keras raise OSError, ValueError, KeyError… for a damaged file
            following = candidates[index + 1] if index + 1 < len(candidates) else None
            fallback = f"falling back to {following.name}" if following else "no older checkpoint"
            reason = str(error).splitlines()[0] if str(error) else type(error).__name__
            print(f"warning: {path}: cannot read this checkpoint ({reason}); {fallback}", file=sys.stderr, flush=True)
            continue
        return int(model.optimizer.iterations.numpy())
    raise UserError(
        f"{directory}: none of the checkpoints {', '.join(p.name for p in candidates)} can be read; "
        "delete the directory to train this run again from step 0"
    )
