"""Starting a run from a trained model (``train --init MODEL``, ``train.init``): domain adaptation.

A few hundred annotated sentences of one's own domain train a poor model from scratch; starting from a
shipped model keeps what it learnt from the 12,500 PropBank-EWT sentences. The run

1. takes the model's configuration (its ``model`` settings are the run's, so every weight has its
   place), with :data:`ADAPTATION`'s training settings on top: fewer steps, a short warm-up and a
   lower learning rate, which suit a few hundred sentences (the user's overrides come last);
2. grows the model's vocabularies by the new data's entries (:meth:`Vocabularies.extended`): old
   words and labels keep their index, new ones get new embedding and output rows (GloVe rows or
   random for new words, random for new labels);
3. copies every weight of the model into the new one before the first step: a table that grew gets
   the old rows in its leading block (:func:`copy_weights`);
4. scores the starting model on the dev data as step 0: the run's best weights are the model's own
   until a step of training beats them, so adapting never leaves a model worse on the dev data than
   the one it started from.

A resumed run continues from its own checkpoints (the model is only read at step 0).
"""

from __future__ import annotations

import json
import pathlib
from typing import Optional

import numpy as np

from data_pipeline.errors import UserError

#: Training settings for adapting a model to a few hundred sentences (applied before the user's
#: overrides). The learning rate is the model's times :data:`LEARNING_RATE_SCALE`.
#: The model's own parse files (``data.parse_*``) belong to its training data, not the new data: a
#: tree column in the new file, a ``NAME.conllu`` beside it or the user's ``data.parse_*`` give its trees.
ADAPTATION = {"train.max_steps": "300", "train.eval_every": "50", "train.warmup_steps": "50",
              "train.patience": "0", "train.max_minutes": "0", "data.parse_train": "", "data.parse_dev": ""}
#: Measured on a held-out EWT genre (benchmarks/domain_adaptation.py, weblog, 200 sentences, dev F1 of the
#: four-genre model 43.84 at step 0): x0.2 fell to 39.4-42.3 at every evaluation, x0.05 stayed at 43.4-43.9.
LEARNING_RATE_SCALE = 0.05


class InitModelError(UserError):
    """``train.init`` does not name a model the run can start from (the message says why)."""


def init_path(spec: str) -> pathlib.Path:
    """The model ``train.init`` names: a packaged model (or a shipped one's name), a run, a ``.keras`` file."""
    from lisa_tf.packages.finding import model_path

    try:
        return model_path(spec, "srl", "train.init")
    except FileNotFoundError as error:
        raise InitModelError(f"train.init {error}") from None


def recorded_config(path: pathlib.Path) -> Optional[pathlib.Path]:
    """The configuration a model was trained with: a package's ``assets/config.json``, a run's
    ``config.json``; None for a ``.keras`` file, which records none."""
    from lisa_tf.packages.finding import PACKAGE_ASSETS, is_package

    if is_package(path):
        return path / PACKAGE_ASSETS / "config.json"
    if path.is_dir() and (path / "config.json").exists():
        return path / "config.json"
    return None


def adaptation_overrides(path: pathlib.Path) -> list[str]:
    """:data:`ADAPTATION` and the scaled learning rate for a run starting from the model at ``path``."""
    config = recorded_config(path)
    rate = json.loads(config.read_text())["train"]["learning_rate"] if config else None
    lowered = [f"train.learning_rate={rate * LEARNING_RATE_SCALE:g}"] if rate else []
    return [f"{k}={v}" for k, v in ADAPTATION.items()] + lowered


def load_init_model(path: pathlib.Path):
    """The trained model at ``path`` (float32), with its best weights when it is a run."""
    from lisa_tf.models.runs import load_model_file, load_run
    from lisa_tf.packages.finding import KERAS_FILE, is_package

    if is_package(path):
        return load_model_file(path / KERAS_FILE)
    if path.is_file():
        return load_model_file(path)
    return load_run(path)


def check_same_settings(config, path: pathlib.Path) -> None:
    """The run's ``model`` settings are the model's (those it records): else no weight has its place."""
    from lisa_tf.config import load_config
    from lisa_tf.models.runs import model_differences

    recorded = recorded_config(path)
    if recorded is None:
        return
    differ = model_differences(load_config(recorded).model, config.model, str(path))
    if differ:
        raise InitModelError(f"train.init {path}: another model ({'; '.join(differ)}); start from a model with "
                             "these settings, or leave out --config and model.* overrides to take its own")


def copy_weights(source, target) -> dict:
    """Copy every weight of ``source`` into ``target`` (the same architecture, perhaps with grown
    vocabularies): equal shapes whole, a grown table into its leading block (the old rows of an
    embedding, the old columns of an output layer). Returns ``{"copied": n, "grown": m}``.

    Raises:
        InitModelError: the models differ in their number of weights or in a weight's rank, or a
            weight of ``target`` is smaller than ``source``'s (a vocabulary never shrinks).
    """
    if len(source.weights) != len(target.weights):
        raise InitModelError(f"train.init: the model has {len(source.weights)} weights, the run's {len(target.weights)}: "
                             "another architecture")
    counts = {"copied": 0, "grown": 0}
    for old, new in zip(source.weights, target.weights):
        value = np.asarray(old)
        shape = tuple(new.shape)
        if value.shape == shape:
            new.assign(value)
            counts["copied"] += 1
            continue
        if len(value.shape) != len(shape) or any(a > b for a, b in zip(value.shape, shape)):
            raise InitModelError(f"train.init: weight {new.path} is {shape} in the run, {value.shape} in the model")
        grown = np.array(new)
        grown[tuple(slice(0, n) for n in value.shape)] = value
        new.assign(grown)
        counts["grown"] += 1
    return counts
