"""Finding a packaged model: where the shipped models are, and what a model argument names.

A packaged model is one directory that ``lisa_tf.load``, ``predict``, ``parse``, ``export`` and ``serve``
take, also by its name (``"srl"``: ``models/srl``)::

    models/srl/      model.keras   card.json   MODEL_CARD.md   assets/config.json   assets/vocab_info.json
                     propbank-frames/ATTRIBUTION   propbank-frames/LICENSE   (a model with a sense head)
                     english-word-forms/ATTRIBUTION   english-word-forms/LICENSE   (its sense lexicon's word forms)

This module names those files and finds a package by its name or path; it imports nothing that builds
or loads a model, so everything that loads one sits above it. Writing a package and its card is
:mod:`lisa_tf.packages.writing`'s.
"""

from __future__ import annotations

import json
import os
import pathlib
from typing import Optional

from data_pipeline.errors import UserError

ROOT = pathlib.Path(__file__).resolve().parents[2]
#: The environment variable naming another directory of packaged models.
MODELS_ENV = "LISA_TF_MODELS"


def _shipped_directory() -> pathlib.Path:
    """Where the shipped models are: ``$LISA_TF_MODELS``; else ``models/`` of the repository; else,
    after ``pip install .``, the installed copy (``lisa_tf/shipped_models``, pyproject.toml)."""
    if os.environ.get(MODELS_ENV):
        return pathlib.Path(os.environ[MODELS_ENV])
    repository = ROOT / "models"
    return repository if repository.is_dir() else pathlib.Path(__file__).resolve().parents[1] / "shipped_models"


#: Where the shipped models live (the repository's ``models/``, see :func:`_shipped_directory`).
SHIPPED = _shipped_directory()
#: The default SRL model of ``lisa_tf.load()``, ``predict`` and ``serve``; and the default parser.
DEFAULT_SRL = SHIPPED / "srl"
DEFAULT_PARSER = SHIPPED / "parser"
CARD_FILE = "card.json"
KERAS_FILE = "model.keras"
#: The package's directory of the run's ``config.json`` and ``vocab_info.json`` (the training data's
#: sizes): the request limits of ``load``, ``predict`` and ``serve``, and the assets of its export.
PACKAGE_ASSETS = "assets"


class PackagingError(UserError):
    """A packaged model that cannot be found, or an experiment directory that lacks what a package needs
    (names the path or name, and what is expected or the command that makes it)."""


def is_package(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a packaged model directory (``model.keras`` beside ``card.json``)."""
    path = pathlib.Path(path)
    return (path / KERAS_FILE).is_file() and (path / CARD_FILE).is_file()


def read_card(path: str | os.PathLike) -> dict:
    return json.loads((pathlib.Path(path) / CARD_FILE).read_text())


def shipped_names() -> list[str]:
    """The names of the shipped models (the packaged directories of ``models/``)."""
    return sorted(p.name for p in SHIPPED.iterdir() if is_package(p)) if SHIPPED.is_dir() else []


def shipped_model(name: str, flag: Optional[str] = None) -> pathlib.Path:
    """The shipped model called ``name`` (``models/NAME``), or a UserError naming the shipped ones."""
    path = SHIPPED / name
    if len(pathlib.Path(name).parts) != 1 or not is_package(path):
        given = f"no {flag} given and " if flag else ""
        raise PackagingError(f"{given}{name!r} is not a shipped model; shipped: {', '.join(shipped_names()) or 'none'}")
    return path


def model_path(path: Optional[str | os.PathLike], kind: str = "srl", flag: Optional[str] = None) -> pathlib.Path:
    """What a model argument names: ``None``, the shipped model of ``kind`` (:func:`default_model`); a
    path that exists, that path; else the shipped model of that name (``"srl"``, ``"parser"``).

    Raises:
        FileNotFoundError: neither a path nor a shipped model's name (the message lists the names).
    """
    if path is None:
        return default_model(kind, flag)
    given = pathlib.Path(path)
    if given.exists():
        return given
    name = str(path)
    if len(given.parts) != 1 or name.endswith(".keras"):  # a path, not a name
        raise FileNotFoundError(f"{path}: no such file or directory")
    if is_package(SHIPPED / name):
        return SHIPPED / name
    raise FileNotFoundError(f"{path}: no such file or directory, and no shipped model of that name (shipped: "
                            f"{', '.join(shipped_names()) or 'none'})")


def default_model(kind: str = "srl", flag: Optional[str] = None) -> pathlib.Path:
    """The shipped model directory of ``kind``, or a UserError saying how to get one."""
    path = DEFAULT_SRL if kind == "srl" else DEFAULT_PARSER
    if not is_package(path):
        given = f"no {flag} given and " if flag else ""
        raise PackagingError(f"{given}the shipped {kind} model {path} is missing; set {MODELS_ENV} to a directory of "
                             "packaged models, or rebuild it with ./run_experiments.sh open --models lisa && "
                             "python -m lisa_tf package-model")
    return path
