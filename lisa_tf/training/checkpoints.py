"""Interval checkpoints that survive ``kill -9`` at any moment: the newest two are kept, each written
whole or not at all, and a checkpoint that cannot be read falls back to the one before it.

Keras' ``BackupAndRestore`` keeps one ``latest.weights.h5`` (and a copy it only uses when reading
raises ``OSError``); this module keeps ``checkpoints/step-N.weights.h5`` for the latest two
evaluation intervals instead, so a truncated or corrupt newest file costs one interval, and the step
is in the file name as well as in the optimiser state the file holds.

Each checkpoint also holds the run's position in its training data (the HDF5 attribute
``data_position``): how many batches of :func:`data_pipeline.dataset.make_dataset`'s batch
sequence training has read, in the same file so that weights and position are written and restored
together. A resumed run reads on from there (``make_dataset(start=...)``) instead of from the first
batch again. Each training step reads one batch of the dataset (under ``tf.distribute`` the batch
is the global one, split over the replicas of every worker), but the position is counted in batches
read, not taken from the step count: loss scaling (``mixed_float16``) leaves the step count where it
was for a batch whose gradients are not finite. Beside it, ``seed_generator_states``
holds the states of the model's random seed generators (the dropout masks drawn next), which Keras
leaves out of weight files: without them a resumed run with dropout would drop other units than the
run that was not stopped.

A checkpoint is written at the end of every interval *before* the dev evaluation; the evaluation's
record in ``metrics.jsonl`` is what marks the interval as finished, and
:class:`~lisa_tf.training.callbacks.DevEvaluation` redoes the evaluation of a restored step that
has no record (the run was killed while evaluating). See :mod:`lisa_tf.training.loop`.
"""

from __future__ import annotations

import dataclasses
import json
import os
import pathlib
import sys
from typing import Callable, Optional

import h5py
import keras
import numpy as np

from data_pipeline.errors import UserError
from lisa_tf.models.weights import load_weights, save_weights
from lisa_tf.util.atomic_files import partial_file, write_text

PREFIX, SUFFIX = "step-", ".weights.h5"
KEEP = 2
#: the single checkpoint of runs written before checkpoints were numbered (Keras ``BackupAndRestore``)
LEGACY = "latest.weights.h5"
#: the checkpoint attribute holding the training data position (batches read)
DATA_POSITION = "data_position"
#: the checkpoint attribute holding the states of the model's random seed generators, ``[n, 2]``
SEED_STATES = "seed_generator_states"


def step_files(directory: str | os.PathLike) -> list[pathlib.Path]:
    """The ``step-N.weights.h5`` files of ``directory``, oldest step first."""
    directory = pathlib.Path(directory)
    files = []
    for path in directory.glob(f"{PREFIX}*{SUFFIX}"):
        number = path.name[len(PREFIX):-len(SUFFIX)]
        if number.isdigit():
            files.append((int(number), path))
    return [path for _, path in sorted(files)]


def checkpoint_files(directory: str | os.PathLike) -> list[pathlib.Path]:
    """Every checkpoint of ``directory`` to try, newest first (the legacy single file last)."""
    legacy = pathlib.Path(directory) / LEGACY
    return step_files(directory)[::-1] + ([legacy] if legacy.exists() else [])


def has_checkpoint(directory: str | os.PathLike) -> bool:
    """Whether ``directory`` holds a checkpoint (a run that resumes rather than starts)."""
    return bool(checkpoint_files(directory))


def save_weights_whole(model: keras.Model, path: str | os.PathLike, attributes: Optional[dict] = None) -> None:
    """:func:`lisa_tf.models.weights.save_weights` whole or not at all (written beside it, then renamed),
    with ``attributes`` set on the file's root (HDF5 attributes, which loading the weights ignores)."""
    with partial_file(path) as partial:
        save_weights(model, partial)
        if attributes:
            with h5py.File(partial, "a") as handle:
                handle.attrs.update(attributes)


def save_checkpoint(model: keras.Model, directory: str | os.PathLike, step: int, keep: int = KEEP,
                    data_position: Optional[int] = None) -> pathlib.Path:
    """Write the weights and optimiser state of ``model`` and the training ``data_position`` as
    ``directory/step-{step}.weights.h5`` (to a temporary name first, then renamed, so a killed write
    leaves no partial checkpoint) and delete all but the newest ``keep``."""
    directory = pathlib.Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{PREFIX}{step}{SUFFIX}"
    attributes = {} if data_position is None else {DATA_POSITION: int(data_position)}
    states = _seed_states(model)
    if states:
        attributes[SEED_STATES] = np.stack([np.asarray(v.numpy()) for v in states])
    save_weights_whole(model, path, attributes)
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
    every interval, before the callbacks after it in the list (the dev evaluation) run; counts the
    training batches read for the checkpoint's data position.

    Args:
        directory: the run's ``checkpoints/``.
        keep: how many checkpoints to keep (the newest).
        data_position: the position training starts at (that of the restored checkpoint; 0 for a
            new run).
        saved: called with the step after each checkpoint is written.
    """

    def __init__(self, directory: str | os.PathLike, keep: int = KEEP, data_position: int = 0,
                 saved: Optional[Callable[[int], None]] = None):
        super().__init__()
        self.directory = pathlib.Path(directory)
        self.keep = keep
        #: batches of the training data read so far (by the end of the latest training step)
        self.data_position = data_position
        self.saved = saved
        self._epoch_start = data_position

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch_start = self.data_position

    def on_train_batch_end(self, batch, logs=None):
        # ``batch`` is the index in the interval of the last step run (several with steps_per_execution)
        self.data_position = self._epoch_start + batch + 1

    def on_epoch_end(self, epoch, logs=None):
        step = int(self.model.optimizer.iterations.numpy())
        self.directory.mkdir(parents=True, exist_ok=True)
        logs_path = _logs_file(self.directory / f"{PREFIX}{step}{SUFFIX}")
        write_text(logs_path, json.dumps({k: float(v) for k, v in (logs or {}).items()}))
        save_checkpoint(self.model, self.directory, step, self.keep, self.data_position)
        if self.saved is not None:
            self.saved(step)


@dataclasses.dataclass(frozen=True)
class Restored:
    """What :func:`restore_checkpoint` restored: the step, and the training data position (None
    when the checkpoint holds none, or nothing was restored: a new run)."""

    step: int = 0
    data_position: Optional[int] = None
    path: Optional[pathlib.Path] = None


def restore_checkpoint(model: keras.Model, directory: str | os.PathLike) -> Restored:
    """Load the newest readable checkpoint of ``directory`` into ``model`` (weights, optimiser
    state and the seed generators' states) and return its step and data position; step 0 when
    there is none.

    A checkpoint that cannot be read is skipped with a warning naming it, and the one before it is
    tried.

    Raises:
        UserError: checkpoints exist but none can be read.
    """
    directory = pathlib.Path(directory)
    candidates = checkpoint_files(directory)
    if not candidates:
        return Restored()
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
        attributes = _attributes(path)
        saved = attributes.get(SEED_STATES)
        states = _seed_states(model)
        if saved is not None and len(saved) == len(states):
            for variable, state in zip(states, saved):
                variable.assign(state)
        position = attributes.get(DATA_POSITION)
        return Restored(int(model.optimizer.iterations.numpy()), None if position is None else int(position), path)
    raise UserError(
        f"{directory}: none of the checkpoints {', '.join(p.name for p in candidates)} can be read; "
        "delete the directory to train this run again from step 0"
    )


def _seed_states(model: keras.Model) -> list:
    """The state variables of the model's random seed generators, in the model's order (the same
    for every build of the same config). Keras names each ``seed_generator_state`` and keeps them out
    of ``model.weights``, hence out of weight files."""
    return [v for v in model.variables if v.name == "seed_generator_state"]


def _attributes(path: pathlib.Path) -> dict:
    """The root attributes of a checkpoint (data position, seed states); empty when unreadable."""
    try:
        with h5py.File(path, "r") as handle:
            return {name: handle.attrs[name][()] for name in (DATA_POSITION, SEED_STATES) if name in handle.attrs}
    except OSError:
        return {}
