"""Evaluate trained runs on a data set: the numbers ``python -m lisa_tf evaluate`` prints.

SRL is scored with the project's srl-eval in both end-to-end conventions (single run, LISA's; and
``swap``, He et al. 2017's). Models that predict predicates, POS and a parse (LISA/SA) are also scored
on predicate detection, POS accuracy and UAS/LAS of their own parse; DeepAtt and Selective Connection
runs with a predicate identifier find the predicates first and are scored on predicate detection too. ``--parse FILE`` and
``--gold-parse`` inject a dependency parse into LISA's syntax head (Strubell et al. 2018, §3: +D&M,
+Gold) without retraining; ``--gold-predicates`` gives the model the gold predicates.
"""

from __future__ import annotations

import functools
import os
from collections import Counter
from typing import Optional, Sequence

from data_pipeline.errors import UserError
from data_pipeline.predicate_kinds import NO_POS_TAGS, verbal_sentences
from data_pipeline.readers.conllu import attach_parse, read_conllu
from data_pipeline.sentence import Predicate, Sentence, Span
from data_pipeline.splits import read_split

from lisa_tf.config import project_path
from lisa_tf.evaluation.frame_checks import frame_checks_table, frame_violations
from lisa_tf.evaluation.parse_eval import evaluate_parsing, parse_scores
from lisa_tf.evaluation.senses import MostFrequentSense, sense_scores
from lisa_tf.evaluation.srl_eval import score
from lisa_tf.evaluation.tables import parsing_table, per_role_table, predicate_table, srl_table
from lisa_tf.labelling.batches import check_ensemble, check_ensemble_models, predict_sentences
from lisa_tf.labelling.parse import parse_sentences
from lisa_tf.models import TASKS, DependencyParser
from lisa_tf.models.runs import MODEL_FILE, load_run, load_run_config, require_run, weights_file


class EvaluationError(UserError):
    """Options of ``evaluate`` that do not go together, or data that lacks what they need."""


def unseen_labels(gold: Sequence, tags) -> dict[str, int]:
    """Gold arguments per role label the model's SRL tags (``vocabs.srl.entries``: the training data's)
    have no tag for: the model cannot predict them, so each counts as a miss. Most frequent first."""
    known = set(tags)
    counts = Counter(argument.label for sentence in gold for predicate in sentence.predicates
                     for argument in predicate.arguments if argument.label != "V" and f"B-{argument.label}" not in known)
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


def _read_data(data: str, data_format: str, data_parse: Optional[str], parse: Optional[str], limit: int):
    """The gold sentences (the first ``limit``) and the parse to inject, if any, cut alike."""
    gold = read_split(data, data_format, data_parse, limit)
    parsed = None
    if parse:
        parsed = read_conllu(parse, limit=len(gold) if limit else 0)
    return gold, parsed


def _file_state(path) -> tuple:
    """A file's identity for a cache key: its path, modification time and size (``None`` if missing)."""
    path = os.path.abspath(path)
    try:
        stat = os.stat(path)
    except OSError:
        return path, None, None
    return path, stat.st_mtime_ns, stat.st_size


@functools.lru_cache(maxsize=2)
def _cached_run(run: str, weights: str, _files: tuple):
    return load_run(run, weights)


def _evaluated_run(run: str, weights: str):
    """``load_run(run, weights)``, the same model object again while the run's model, weights and config
    files are unchanged: one run evaluated under several conditions (``experiments``' predicted / gold
    predicates / parses, on dev and test) loads once, and its compiled inference
    (:mod:`lisa_tf.labelling.compiled`, one per model object) is traced once per condition, not per call.
    Evaluation never changes the model it scores."""
    run_dir = require_run(run)
    files = [run_dir / MODEL_FILE, run_dir / "config.json"] + ([] if weights == "model" else [weights_file(run_dir, weights)])
    return _cached_run(str(run_dir.resolve()), weights, tuple(_file_state(f) for f in files))


@functools.lru_cache(maxsize=4)
def _most_frequent_sense(path: str, data_format: str, limit: int, _state: tuple) -> MostFrequentSense:
    return MostFrequentSense(read_split(path, data_format, limit=limit))


def evaluate_runs(
    runs: Sequence[str],
    data: str,
    data_format: Optional[str] = None,
    parse: Optional[str] = None,
    gold_parse: bool = False,
    data_parse: Optional[str] = None,
    gold_predicates: bool = False,
    weights: str = "best",
    limit: int = 0,
    token_budget: int = 4096,
    return_sentences: bool = False,
    predicates: str = "all",
    constraints: bool = True,
):
    """Metrics of one run, or of an ensemble of runs (averaged softmax), on ``data``.

    With ``return_sentences`` the result is ``(metrics, gold, predicted)``; ``predicates="verbal"``
    scores the verbal predicates only (:func:`_srl_metrics`).
    """
    if parse and gold_parse:
        raise EvaluationError("--parse and --gold-parse are exclusive: inject one parse")
    # Every run, and whether the runs can form an ensemble, is checked before any model is loaded.
    configs = [load_run_config(require_run(run)) for run in runs]
    check_ensemble([(str(run), c.model.kind, TASKS[c.model.kind].model_layout(c.model)) for run, c in zip(runs, configs)])
    models = [_evaluated_run(run, weights) for run in runs]
    if len(models) > 1:
        check_ensemble_models(models, [str(run) for run in runs])
    config = configs[0]
    gold, parsed = _read_data(data, data_format or config.data.format, data_parse, parse, limit)
    return evaluate_models(models, gold, names=list(runs), data=data, parse=parsed, parse_name=parse,
                           gold_parse=gold_parse, gold_predicates=gold_predicates, token_budget=token_budget,
                           return_sentences=return_sentences, predicates=predicates, constraints=constraints,
                           training=(config.data.train, config.data.format, config.data.max_train_sentences))


def evaluate_model(
    model: str,
    data: str,
    data_format: Optional[str] = None,
    parse: Optional[str] = None,
    gold_parse: bool = False,
    data_parse: Optional[str] = None,
    gold_predicates: bool = False,
    limit: int = 0,
    token_budget: int = 4096,
    return_sentences: bool = False,
    predicates: str = "all",
    constraints: bool = True,
):
    """Metrics of what ``evaluate --model`` names, as for a run: a run directory, a packaged model
    (also by its name: ``srl``), a ``.keras`` file, or a SavedModel export (labelled through its
    signatures). The data's format defaults to the one the model was trained on, where it records it."""
    import json
    import pathlib

    from lisa_tf.models.runs import MODEL_FILE, load_model_file
    from lisa_tf.packages.finding import KERAS_FILE, PACKAGE_ASSETS, is_package, model_path

    if parse and gold_parse:
        raise EvaluationError("--parse and --gold-parse are exclusive: inject one parse")
    try:
        path = model_path(model, "srl", "--model")
    except FileNotFoundError as error:
        raise EvaluationError(f"--model {error}") from None
    if not is_package(path) and (path / MODEL_FILE).exists() and (path / "config.json").exists():
        return evaluate_runs([str(path)], data, data_format, parse, gold_parse, data_parse, gold_predicates,
                             limit=limit, token_budget=token_budget, return_sentences=return_sentences,
                             predicates=predicates, constraints=constraints)
    export = None
    if is_package(path):
        recorded, loaded = path / PACKAGE_ASSETS / "config.json", load_model_file(path / KERAS_FILE)
    elif path.is_file() and path.suffix == ".keras":
        recorded, loaded = None, load_model_file(path)
    else:
        from lisa_tf.labelling.predictor import ExportPredictor
        from lisa_tf.packages.export_cache import latest_version

        version = latest_version(path)
        recorded, export = version / "assets" / "config.json", ExportPredictor(version, token_budget=token_budget)
        if "srl_tags" not in export.signature.structured_outputs:
            raise EvaluationError(f"--model {path}: a dependency parser's export; evaluate the parser's package or "
                                  ".keras file (its trees are scored there)")
    record = json.loads(pathlib.Path(recorded).read_text()) if recorded is not None and pathlib.Path(recorded).exists() else None
    if data_format is None:
        if record is None:
            raise EvaluationError(f"--model {path}: records no data format; give --format conll05|conll12|lisa|conllu")
        data_format = record["data"]["format"]
    gold, parsed = _read_data(data, data_format, data_parse, parse, limit)
    options = dict(data=data, parse=parsed, parse_name=parse, gold_parse=gold_parse, gold_predicates=gold_predicates,
                   return_sentences=return_sentences, predicates=predicates, constraints=constraints)
    if export is not None:
        if not constraints:
            raise EvaluationError(f"--no-constraints: {path} is a SavedModel export, which decodes as it was exported; "
                                  "evaluate its run or .keras model, or export it with --no-constraints")
        del options["constraints"]
        # scored on every sentence, as the .keras path is: the serving limit is not an evaluation's
        export.max_sentence_tokens = max([export.max_sentence_tokens] + [len(s) for s in gold])
        return evaluate_export(export, gold, name=str(path), **options)
    training = (project_path(record["data"]["train"]), record["data"]["format"],
                record["data"].get("max_train_sentences", 0)) if record is not None else None
    return evaluate_models([loaded], gold, names=[str(path)], token_budget=token_budget, training=training, **options)


def evaluate_models(
    models: Sequence,
    gold: Sequence,
    *,
    names: Sequence[str],
    data: str,
    parse: Optional[Sequence] = None,
    parse_name: Optional[str] = None,
    gold_parse: bool = False,
    gold_predicates: bool = False,
    token_budget: int = 4096,
    return_sentences: bool = False,
    training: Optional[tuple[str, str, int]] = None,
    predicates: str = "all",
    constraints: bool = True,
):
    """Metrics of loaded models (one, or an ensemble) on the ``gold`` sentences of ``data``: what
    :func:`evaluate_runs` computes once the runs are loaded; ``names`` label the models in the
    result, ``parse`` (sentences read from the CoNLL-U file ``parse_name``) is injected. For a model
    with a sense head, ``training`` (the training data's path, format and sentence limit, where it can be
    read: :func:`_sense_metrics`) gives the most-frequent-sense baseline beside the sense accuracy."""
    vocabs = models[0].vocabularies()
    if predicates == "verbal":  # before labelling: POS tags are LISA's and SA's
        if isinstance(models[0], DependencyParser):
            raise EvaluationError(f"--predicates verbal: {names[0]}: a dependency parser, whose trees are scored "
                                  "without predicates; leave out --predicates")
        if models[0].layout != "sentence":
            raise EvaluationError(f"--predicates verbal: {names[0]}: {NO_POS_TAGS}; score all predicates")
    if isinstance(models[0], DependencyParser):
        return _evaluate_parser(models, names, data, gold, token_budget, return_sentences)
    inputs = gold
    if parse is not None:
        inputs = attach_parse(gold, parse, parse_name)
    if (parse is not None or gold_parse) and inputs[0].heads is None:
        raise EvaluationError(f"{data}: no dependency heads to inject; give --data-parse FILE.conllu or --parse FILE.conllu")
    injected = parse is not None or gold_parse
    options = {"constraints": constraints}
    if getattr(models[0], "uses_syntax", False):
        options["inject_parse"] = injected
    predicts_predicates = getattr(models[0], "predicts_predicates", False)
    if predicts_predicates:
        options["gold_predicates"] = gold_predicates
    predicted = predict_sentences(models, inputs, vocabs, token_budget=token_budget, **options)
    scored_gold, scored = _scored(gold, predicted, predicates)
    metrics = _srl_metrics(scored_gold, scored, names, data, _condition(gold_parse, parse_name if parse is not None else None),
                           gold_predicates or not predicts_predicates, vocabs.srl.entries,
                           finds_predicates=models[0].layout == "sentence" or (predicts_predicates and not gold_predicates),
                           own_parse=models[0].layout == "sentence" and not injected, predicates=predicates,
                           tags_pos=models[0].layout == "sentence", dep_labels=vocabs.dep_labels.entries)
    metrics["constraints"] = bool(constraints)
    metrics["frames"] = frame_violations(predicted)
    if getattr(models[0], "sense_head", None) is not None:
        metrics["senses"] = _sense_metrics(scored_gold, scored, training)
    return (metrics, gold, predicted) if return_sentences else metrics


def _scored(gold, predicted, predicates: str):
    """The sentences every figure is computed on: all, or (``predicates="verbal"``) with only the
    predicates at the tokens the model's own tags call verbal, gold and predicted alike
    (:func:`data_pipeline.predicate_kinds.verbal_sentences`, as ``predict --predicates verbal``)."""
    if predicates != "verbal":
        return gold, predicted
    try:
        return verbal_sentences(gold, predicted)
    except ValueError as error:
        raise EvaluationError(f"--predicates verbal: {error}; score all predicates") from None


def _sense_metrics(gold, predicted, training: Optional[tuple[str, str, int]]) -> dict:
    """Sense accuracy and semantic F1 (:mod:`lisa_tf.evaluation.senses`), and the most-frequent-sense
    baseline's accuracy on the same predicates when the training data can be read: ``training`` is the
    model's training file, its format and how many of its first sentences the model was trained on
    (``data.max_train_sentences``, 0 all), the data the baseline counts."""
    metrics = sense_scores(gold, predicted)
    if training is not None and os.path.exists(training[0]):
        path, data_format, limit = training
        baseline = _most_frequent_sense(path, data_format, limit, _file_state(path))
        metrics["most_frequent_sense"] = {"training_data": path if not limit else f"{path}, first {limit} sentences",
                                          "accuracy": sense_scores(gold, baseline.label(gold))["accuracy"]}
    return metrics


def _condition(gold_parse: bool, parse_name: Optional[str]) -> str:
    return "gold parse" if gold_parse else (f"parse {parse_name}" if parse_name is not None else "own parse")


def _srl_metrics(gold, predicted, names, data, condition: str, gold_predicates: bool, tags,
                 finds_predicates: bool, own_parse: bool, predicates: str = "all", tags_pos: bool = False,
                 dep_labels=None) -> dict:
    """The SRL metrics of ``predicted`` against ``gold``: srl-eval both conventions, the labels the
    model cannot predict, and where the model finds its own predicates, predicate detection with POS
    accuracy, UAS and LAS (``parsing``). Each of those three is ``None`` (not applicable, ``n/a`` in the
    tables) when the model does not predict it — POS without ``tags_pos`` (the predicate-layout models
    pass the data's own tags through), UAS/LAS without ``own_parse`` (no parse, or an injected one) — or
    the data cannot score it: no such layer in the gold data, or gold dependency labels that share none
    with ``dep_labels``, the model's (another labelling scheme,
    :func:`~lisa_tf.evaluation.parse_eval.scorable_labels`). ``predicates="verbal"``: the sentences were kept
    to the verbal predicates by :func:`_scored`; the metrics say so."""
    metrics = {
        "runs": list(names),
        "data": data,
        "sentences": len(gold),
        "condition": condition,
        "gold_predicates": gold_predicates,
        "srl": score(gold, predicted),
        "srl_swap": score(gold, predicted, swap=True),
        "unseen_labels": unseen_labels(gold, tags),
    }
    if predicates == "verbal":
        metrics["predicates"] = "verbal"
    if finds_predicates:
        layers = ["predicates"]
        if tags_pos and _has(predicted, "pos") and _has(gold, "pos"):
            layers.append("pos")
        if own_parse and _has(predicted, "heads") and _has(gold, "heads"):
            layers.append("parse")
        metrics["parsing"] = {"pos": None, "uas": None, "las": None,
                              **evaluate_parsing(gold, predicted, layers=layers, labels=dep_labels)}
    return metrics


def _has(sentences, layer: str) -> bool:
    """Whether every sentence has the ``layer`` (``pos``, ``heads``); at least one sentence given."""
    return bool(sentences) and all(getattr(s, layer) is not None for s in sentences)


def _frame_sentence(gold: Sentence, frame: dict) -> Sentence:
    """A predictor's frame of ``gold``'s tokens as a Sentence the scorers read; a predicate's lemma is
    the gold one at its position (srl-eval's verb column is the gold file's, as in CoNLL evaluations)."""
    lemmas = {p.position: p.lemma for p in gold.predicates}
    tokens = frame["tokens"]
    predicates = [Predicate(p["token"], lemmas.get(p["token"], p["text"].lower()), None, tuple(sorted(
        [Span(a["token_start"], a["token_end"] - 1, a["role"]) for a in p["arguments"]]
        + [Span(p["token"], p["token"], "V")]))) for p in frame["predicates"]]
    column = lambda key: [t[key] for t in tokens] if tokens and key in tokens[0] else None  # noqa: E731
    return Sentence(words=list(gold.words), pos=column("pos"), heads=column("head"), dep_labels=column("deprel"),
                    predicates=predicates)


def evaluate_export(predictor, gold: Sequence[Sentence], *, name: str, data: str, parse: Optional[Sequence] = None,
                    parse_name: Optional[str] = None, gold_parse: bool = False, gold_predicates: bool = False,
                    return_sentences: bool = False, predicates: str = "all"):
    """:func:`evaluate_models` for a SavedModel export (an :class:`~lisa_tf.labelling.predictor.ExportPredictor`):
    the gold sentences' tokens are labelled through its signatures and scored alike."""
    inputs = attach_parse(gold, parse, parse_name) if parse is not None else gold
    injected = parse is not None or gold_parse
    if injected and inputs[0].heads is None:
        raise EvaluationError(f"{data}: no dependency heads to inject; give --data-parse FILE.conllu or --parse FILE.conllu")
    if gold_predicates and not predictor.takes_predicates:
        raise EvaluationError("--gold-predicates: this export finds its own predicates (LISA, SA) and takes none; "
                              "evaluate its .keras file or package to give the gold ones")
    if predicates == "verbal" and not predictor.tells_verbs:
        raise EvaluationError(f"--predicates verbal: {name}: {NO_POS_TAGS}; score all predicates")
    given = [[p.position for p in s.predicates] for s in gold] if gold_predicates or not predictor.finds_predicates else None
    frames = predictor.predict(tokens=[s.words for s in gold], predicates=given,
                               parse=[list(s.heads) for s in inputs] if injected else None)
    predicted = [_frame_sentence(g, f) for g, f in zip(gold, frames)]
    scored_gold, scored = _scored(gold, predicted, predicates)
    metrics = _srl_metrics(scored_gold, scored, [name], data, _condition(gold_parse, parse_name if parse is not None else None),
                           given is not None, predictor.srl_tags(), finds_predicates=given is None,
                           own_parse=not injected, predicates=predicates, tags_pos=predictor.tells_verbs)
    return (metrics, gold, predicted) if return_sentences else metrics


def _evaluate_parser(models, runs, data, gold, token_budget, return_sentences):
    """A dependency parser run (:mod:`lisa_tf.models.parser`): POS (and UPOS) accuracy, UAS and LAS
    (punctuation excluded) of its trees against the data's gold trees; ``None`` (not applicable) for a
    tag set the parser does not predict or the data lacks, and for LAS on labels of another scheme."""
    if len(models) > 1:
        raise ValueError("parser runs are evaluated one at a time (no ensembles)")
    if gold[0].heads is None:
        raise ValueError(f"{data}: no gold dependency heads to score the parser against; give --data-parse FILE.conllu")
    predicted = parse_sentences(models[0], gold, token_budget=token_budget)
    scores = parse_scores(gold, predicted, models[0].dep_labels)
    parsing = {k: scores.get(k) for k in ("pos", "uas", "las")}
    if models[0].upos_labels:
        parsing = {"upos": scores.get("upos"), **parsing}
    if not models[0].pos_labels:
        parsing["pos"] = None
    metrics = {"runs": list(runs), "data": data, "sentences": len(gold), "condition": "parser", "parsing": parsing}
    return (metrics, gold, predicted) if return_sentences else metrics


def metrics_markdown(metrics: dict) -> str:
    """The metrics as Markdown tables in the papers' layouts."""
    if metrics["condition"] == "parser":
        return parsing_table({" + ".join(metrics["runs"]): metrics["parsing"]},
                             caption="Parsing (punctuation excluded from UAS/LAS)")
    name = " + ".join(metrics["runs"]) + ("" if metrics["condition"] == "own parse" else f" ({metrics['condition']})")
    name += ", verbal predicates" if metrics.get("predicates") == "verbal" else ""
    parts = [
        srl_table({name: {"single run": metrics["srl"], "swap (He et al.)": metrics["srl_swap"]}}, caption="SRL"),
    ]
    parsing = metrics.get("parsing")
    if parsing:
        detection = {k: parsing[f"predicate_{k}"] for k in ("precision", "recall", "f1")}
        parts.append(predicate_table({name: {metrics["data"]: detection}}, caption="Predicate detection"))
        if any(parsing.get(k) is not None for k in ("pos", "uas", "las")):  # n/a where not measured
            parts.append(parsing_table({name: parsing}, caption="Parsing"))
    per_role = metrics["srl"].get("per_role")
    if per_role:
        parts.append("F1 per role (srl-eval)\n\n" + "\n".join(per_role_table(per_role)))
    if "frames" in metrics:
        parts.append(frame_checks_table(metrics["frames"], "decoded with constraints" if metrics.get("constraints")
                                        else "decoded without constraints"))
    senses = metrics.get("senses")
    if senses:
        rows = [f"| {name} | {senses['gold_predicates']} | {senses['accuracy']:.2f} | "
                f"{senses['semantic']['f1']:.2f} | {metrics['srl']['f1']:.2f} |"]
        if "most_frequent_sense" in senses:
            rows.append(f"| most frequent sense ({senses['most_frequent_sense']['training_data']}) | "
                        f"{senses['gold_predicates']} | {senses['most_frequent_sense']['accuracy']:.2f} | | |")
        parts.append("Senses (accuracy on the gold predicates; semantic F1 counts each sense as one more dependency, "
                     "CoNLL-2009)\n\n| model | gold predicates | sense accuracy | semantic F1 | srl-eval F1 |\n"
                     "|---|---:|---:|---:|---:|\n" + "\n".join(rows))
    return "\n\n".join(parts)
