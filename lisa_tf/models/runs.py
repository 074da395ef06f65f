"""A run directory: what training leaves in it and how its model is loaded.

``model.keras`` holds the whole model — preprocessor with its word vocabulary, label vocabularies,
configuration, weights (the best dev weights once training has finished) — and is all that loading
needs; ``keras.saving.load_model(run / "model.keras")`` works as well after ``import lisa_tf``. The
other files belong to training: ``config.json`` (the experiment), ``vocab/``, ``checkpoints/``,
``best/model.weights.h5``, ``weights/step-N.weights.h5``, ``final.weights.h5``, ``metrics.jsonl``,
``done.json``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import pathlib
import sys
import warnings
import weakref
import zipfile
from typing import Optional, Sequence

import keras

from data_pipeline.errors import UserError
from lisa_tf.config import ExperimentConfig, config_from_dict
import lisa_tf.models  # noqa: F401  (registers the model classes that load_model reads)
from lisa_tf.util.atomic_files import partial_file
from lisa_tf.packages.finding import KERAS_FILE as MODEL_FILE  # noqa: F401  (a run keeps its model as a package does)
from lisa_tf.models.weights import load_weights

#: the summary training writes when it ends (its presence marks the run as finished)
DONE_FILE = "done.json"


class RunError(UserError):
    """A run directory that cannot be loaded: names the path and what is missing."""


def require_run(run_dir: str | os.PathLike, flag: str = "--run") -> pathlib.Path:
    """``run_dir`` as a path, once it is known to be a run directory (it holds ``model.keras``).

    Raises:
        RunError: naming ``flag`` and the path: no such directory, or not a run.
    """
    path = pathlib.Path(run_dir)
    if not path.exists():
        raise RunError(f"{flag} {path}: no such directory")
    if not path.is_dir():
        raise RunError(f"{flag} {path}: not a directory; expected a run directory written by `python -m lisa_tf train`")
    if not (path / MODEL_FILE).exists():
        raise RunError(f"{flag} {path}: not a run directory (no {MODEL_FILE}); expected a directory written by "
                       "`python -m lisa_tf train`")
    return path


def load_run_config(run_dir: str | os.PathLike) -> ExperimentConfig:
    """The experiment config a run was trained with (``config.json``)."""
    path = pathlib.Path(run_dir) / "config.json"
    try:
        raw = json.loads(path.read_text())
    except FileNotFoundError:
        raise RunError(f"{path}: no such file; is {run_dir} a run directory written by `python -m lisa_tf train`?") from None
    except json.JSONDecodeError as error:
        raise RunError(f"{path}: not valid JSON ({error}); the run's config is damaged") from None
    return config_from_dict(raw)


def model_differences(recorded, given, where: str, ignore: Sequence[str] = ()) -> list[str]:
    """``model.KEY is A in WHERE, B here`` for each ``model`` setting that differs (but those in ``ignore``)."""
    return [f"model.{f.name} is {getattr(recorded, f.name)!r} in {where}, {getattr(given, f.name)!r} here"
            for f in dataclasses.fields(recorded)
            if f.name not in ignore and getattr(recorded, f.name) != getattr(given, f.name)]


def check_same_model(config: ExperimentConfig, run_dir: str | os.PathLike) -> None:
    """When ``run_dir`` already holds a run (``config.json``), check that ``config`` has the run's model.

    Raises:
        RunError: naming the run directory and each ``model.*`` key that differs.
    """
    if not (pathlib.Path(run_dir) / "config.json").exists():
        return
    differ = model_differences(load_run_config(run_dir).model, config.model, "the run")
    if differ:
        raise RunError(f"--out {run_dir} holds a run of a different model ({'; '.join(differ)}); resume it with its "
                       "own config (leave out --config and model.* overrides) or choose a new --out")


#: What a run that has not reached its first evaluation lacks (``train`` writes ``model.keras`` as
#: soon as the model is built, before any step).
UNTRAINED = ("the run has no trained weights (neither best/model.weights.h5 nor final.weights.h5: training has not "
             "reached its first evaluation)")


def has_trained_weights(run_dir: str | os.PathLike) -> bool:
    """Whether training has left weights in ``run_dir``: the best dev weights or the final ones."""
    run_dir = pathlib.Path(run_dir)
    return (run_dir / "best" / "model.weights.h5").exists() or (run_dir / "final.weights.h5").exists()


def weights_file(run_dir: str | os.PathLike, weights: str = "best") -> pathlib.Path:
    """The weight file ``weights`` names: ``best`` (falling back to ``final``), ``final``, or a path.

    Raises:
        RunError: the run has no trained weights, has not finished (``final``), or the file does not
            exist or is not a ``.weights.h5`` file.
    """
    run_dir = pathlib.Path(run_dir)
    named = {"best": run_dir / "best" / "model.weights.h5", "final": run_dir / "final.weights.h5"}
    if weights in named:
        if not has_trained_weights(run_dir):
            raise RunError(f"{run_dir}: {UNTRAINED}; train it with `python -m lisa_tf train --out {run_dir}`")
        path = named[weights]
        if weights == "best" and not path.exists():
            path = named["final"]
        if not path.exists():
            raise RunError(f"{path}: no such weight file; it is written when training ends (use --weights best)")
        return path
    path = pathlib.Path(weights)
    if not path.is_file():
        raise RunError(f"--weights {weights}: no such file; expected best, final or a path to a .weights.h5 file")
    if not path.name.endswith(".weights.h5"):
        raise RunError(f"--weights {weights}: expected best, final or a path to a .weights.h5 file")
    return path


#: per model, the copy :func:`save_model` writes and the configuration it was built from
_saving_copies: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _saving_copy(model):
    """A built model of ``model``'s configuration, without an optimiser: made once per model and configuration
    and kept while the model lives, for a run saves its model at its start and again at its end (building a
    model with a contextual encoder takes seconds). Every weight is set before each save."""
    config = model.get_config()
    kept = _saving_copies.get(model)
    if kept is not None and kept[0] == config:
        return kept[1]
    copy = type(model).from_config(config)
    copy.build_from_batch()
    _saving_copies[model] = (config, copy)
    return copy


def save_model(model, path: str | os.PathLike, weights: str | os.PathLike | None = None,
               float16_weights: bool = False) -> pathlib.Path:
    """Write ``model`` as a ``.keras`` file without its optimiser: a fresh copy of the model with its
    weights (or those of the ``weights`` file), so the file holds the model alone, whatever it was
    compiled with, and the model itself is left as it is. ``float16_weights``: store the weights in
    16 bits, half the file (:mod:`lisa_tf.packages.storage_precision`); they load as float32."""
    path = pathlib.Path(path)
    copy = _saving_copy(model)
    # Every weight from the model first: a weight file leaves out a frozen encoder, and the copy's encoder
    # is built from the model's config, not read from its preset.
    copy.set_weights(model.get_weights())
    if weights is not None:
        load_weights(copy, weights)
    with partial_file(path) as partial:  # whole or not at all: a killed write leaves the old file
        copy.save(partial)
        if float16_weights:
            from lisa_tf.packages.storage_precision import store_weights_in_float16

            store_weights_in_float16(partial)
    return path


def read_done(run_dir: str | os.PathLike) -> Optional[dict]:
    """The summary of a finished run (``done.json``), or None when the run has not finished.

    A ``done.json`` that cannot be read (cut short, not JSON, no ``steps``) counts as not finished,
    with a warning naming it: training then resumes from the run's checkpoints and writes it again.
    """
    path = pathlib.Path(run_dir) / DONE_FILE
    try:
        done = json.loads(path.read_text())
        int(done["steps"])
        return done
    except FileNotFoundError:
        return None
    except (OSError, ValueError, TypeError, KeyError) as error:
        print(f"warning: {path}: cannot be read ({type(error).__name__}: {error}); "
              "taking the run as not finished", file=sys.stderr, flush=True)
        return None


def load_model_file(path: str | os.PathLike, dtype_policy: str = "float32"):
    """A ``.keras`` model file, built under ``dtype_policy`` (the global policy is restored after).

    Raises:
        RunError: the file is missing, is not a ``.keras`` archive (empty, cut short or damaged;
            Keras would report "File not found" for it), lacks or has a damaged part inside, or holds
            Python code that Keras' safe mode refuses to run (a ``Lambda`` layer).
    """
    path = pathlib.Path(path)
    if not path.is_file():
        raise RunError(f"{path}: no such file")
    if not zipfile.is_zipfile(path):
        raise RunError(f"{path}: not a readable .keras model file ({path.stat().st_size} bytes: empty, cut short or "
                       "damaged); replace it with a complete copy")
    previous = keras.config.dtype_policy().name
    keras.config.set_dtype_policy(dtype_policy)
    try:
        return keras.saving.load_model(path, compile=False)
    except (zipfile.BadZipFile, EOFError, KeyError, OSError, json.JSONDecodeError) as error:
        # a damaged archive, or one whose config.json or weights inside are missing or cut short
        reason = str(error).strip("'\"").splitlines()[0] if str(error) else type(error).__name__
        raise RunError(f"{path}: not a readable .keras model file ({reason}); replace it with a complete copy") from None
    except ValueError as error:
        if "safe_mode" not in str(error):
            raise
        raise RunError(f"{path}: refused: the file holds Python code (a Lambda layer), which Keras' safe mode does not "
                       "run; lisa_tf models hold none, so it was not written by lisa_tf or has been altered") from None
    finally:
        keras.config.set_dtype_policy(previous)


def with_sense_lexicon(model, run_dir: str | os.PathLike, dtype_policy: str = "float32", rebuild: bool = False):
    """``model`` (with a sense head, saved without its word-form lexicon, or ``rebuild``: with one built
    by earlier code) rebuilt with the lexicon of its run as this code builds it
    (:func:`lisa_tf.decoding.sense_choice.lexicon_for_run`: the run's frame index and training data, the
    shipped word forms), with the same weights."""
    from data_pipeline.splits import read_split
    from lisa_tf.decoding.sense_choice import lexicon_for_run

    config = load_run_config(run_dir)
    print(f"{run_dir}: {'rebuilding the sense lexicon' if rebuild else 'the model has no sense lexicon; building it'} "
          f"from {config.data.train}, the frame index and the word forms", file=sys.stderr)
    train = read_split(config.data.train, config.data.format, config.data.parse_train, config.data.max_train_sentences)
    return with_lexicon(model, lexicon_for_run(config, model.sense_labels, train), dtype_policy)


def with_frames(model, frames: Optional[str | os.PathLike], dtype_policy: Optional[str] = None):
    """``model`` deciding with the user's own frame index at ``frames`` merged over its word-form lexicon
    (:mod:`lisa_tf.decoding.own_frames`: the rolesets of the lemmas it adds become candidates of their
    forms, its rolesets' core roles constrain the decoding), rebuilt with the same weights. ``model``
    itself when ``frames`` is None, when it has no lexicon (no sense head, or saved before models had
    one) or when the index changes nothing of it. Rebuilt under ``dtype_policy`` (None: the model's own)."""
    if frames is None or getattr(model, "sense_choice", None) is None:
        return model
    from lisa_tf.decoding.frame_meanings import own_frame_index
    from lisa_tf.decoding.own_frames import lexicon_with_frames

    old = dict(model.sense_lexicon)
    new = lexicon_with_frames(old, len(model.sense_labels), own_frame_index(frames))
    return model if new == old else with_lexicon(model, new, dtype_policy or model.dtype_policy.name)


def with_lexicon(model, lexicon: Optional[dict], dtype_policy: str = "float32"):
    """``model`` rebuilt with the word-form lexicon ``lexicon`` (:func:`lisa_tf.decoding.sense_choice.build_lexicon`'s
    fields) under ``dtype_policy``, with the same weights."""
    previous = keras.config.dtype_policy().name
    keras.config.set_dtype_policy(dtype_policy)
    try:
        rebuilt = type(model).from_config({**model.get_config(), "sense_lexicon": lexicon})
        with warnings.catch_warnings():  # Keras' note that a model without build() is built by calling it
            warnings.filterwarnings("ignore", message=".*does not have a `build\\(\\)` method")
            rebuilt.build_from_batch()
    finally:
        keras.config.set_dtype_policy(previous)
    rebuilt.set_weights(model.get_weights())
    return rebuilt


def load_run(run_dir: str | os.PathLike, weights: str = "best", dtype_policy: str = "float32"):
    """The trained model of a run directory, with ``weights`` (``best``, ``final``, ``model`` for
    the weights inside ``model.keras``, or a path), built under ``dtype_policy``."""
    path = require_run(run_dir) / MODEL_FILE
    weights = None if weights == "model" else weights_file(run_dir, weights)  # checked before the slow load
    model = load_model_file(path, dtype_policy)
    if getattr(model, "sense_head", None) is not None and model.sense_choice is None:
        model = with_sense_lexicon(model, run_dir, dtype_policy)
    if weights is not None:
        try:
            load_weights(model, weights)
        except OSError as error:  # h5py: empty, cut short or not HDF5
            raise RunError(f"{weights}: not a readable weights file ({str(error).splitlines()[0]}); replace it with a "
                           "complete copy, or give another with --weights") from None
    return model
