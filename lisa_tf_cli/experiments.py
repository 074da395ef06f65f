"""The papers' experiments end to end: ``./run_experiments.sh {open,conll05,conll12}``.

Per dataset: train SA, LISA, DeepAtt-FFN (RNN/CNN with ``--all``) and Selective Connection;
every config the plan needs (the models', the parsers') is read and checked before the first
training starts; evaluate each on dev and test with predicted predicates (both scorer conventions) and gold
predicates; LISA also with the gold parse and with the paper's "+D&M" parse: without ``--parse-dir``
the Dozat & Manning parser (:mod:`lisa_tf.models.parser`, ``configs/DATASET/parser.toml``) is trained
first — on the UD trees shipped beside the open data, on the head-rule conversion of the treebank
for conll05/conll12 — and parses dev and test into ``OUT/parses/SPLIT.conllu`` (its UAS/LAS go in the
parsing table); with ``--parse-dir`` that directory's CoNLL-U files are used instead. Export each SRL
model and make one REST request against the export. Writes ``OUT/results.md``
(the papers' table layouts), ``OUT/results.json`` and PNG figures. Re-running skips finished work
and resumes interrupted training (every step is keyed by a file in OUT).

With ``--contextual`` every model is trained twice more with contextual word vectors: the papers'
"+ELMo" rows, the same config with ``model.contextual=minilm`` (:mod:`lisa_tf.models.contextual`), run
``KEY_minilm``, reported as "NAME + MiniLM"; and with that encoder fine-tuned
(``model.contextual_trainable=true``), run ``KEY_finetune``, "NAME + MiniLM fine-tuned"; each with the
same conditions (LISA's twins also with the gold and the D&M parse). The D&M parser gets the same twins
(``parser_minilm``, ``parser_finetune``, parses in ``OUT/parses/SPLIT_minilm.conllu`` and
``SPLIT_finetune.conllu``): the "+ D&M parse" of a LISA twin is its parser twin's, so the parse injected
into a model with MiniLM vectors comes from a parser with the same vectors, frozen or fine-tuned alike.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
import time
import urllib.request
from typing import Optional, Sequence

from data_pipeline.errors import UserError
from lisa_tf.evaluation.report import TWINS, base_key, with_twins

ROOT = pathlib.Path(__file__).resolve().parents[1]
NAMES = {"parser": "D&M parser", "sa": "SA", "lisa": "LISA", "deepatt_ffn": "DeepAtt-FFN", "deepatt_rnn": "DeepAtt-RNN",
         "deepatt_cnn": "DeepAtt-CNN", "selective": "Selective Conn."}

# Small models on a slice of the data: the whole pipeline in a few minutes on a 2-core CPU.
QUICK = {
    "data.max_train_sentences": "300", "data.max_eval_sentences": "80",
    "model.embedding_size": "50", "model.hidden_size": "64", "model.num_heads": "4", "model.filter_size": "128",
    "model.num_layers": "3", "model.pos_layer": "0", "model.parse_layer": "1", "model.parse_attention_layer": "2",
    "model.parse_mlp_size": "64", "model.dep_label_mlp_size": "32", "model.srl_mlp_size": "64",
    "train.max_steps": "300", "train.eval_every": "150", "train.batch_tokens": "1024", "train.patience": "0",
    "train.optimizer": "nadam", "train.schedule": "noam", "train.learning_rate": "0.05", "train.warmup_steps": "100",
    "train.epsilon": "1e-9",
}


# The parser's share of --quick: one small BiLSTM layer.
PARSER_QUICK = {"model.lstm_layers": "1", "model.lstm_size": "64", "model.char_embedding_size": "0"}


#: The overrides that turn a model's config into each of its twins (``--contextual``), by run-key suffix.
TWIN_OVERRIDES = {"_minilm": {"model.contextual": "minilm"},
                  "_finetune": {"model.contextual": "minilm", "model.contextual_trainable": "true"}}
assert set(TWIN_OVERRIDES) == set(TWINS)


def model_name(key: str) -> str:
    """The table name of a run key: ``lisa`` → "LISA", ``lisa_minilm`` → "LISA + MiniLM",
    ``lisa_finetune`` → "LISA + MiniLM fine-tuned"."""
    base = base_key(key)
    return NAMES[base] + TWINS.get(key[len(base):], "")


def _config_source(dataset_name: str, key: str) -> tuple[pathlib.Path, list]:
    """The config file of run ``key`` and the overrides that make it: ``configs/DATASET/KEY.toml``
    when the dataset has one for it (``lisa_finetune.toml``: a twin tuned in its own file), else the
    base model's file with the twin's ``section.key=value`` overrides (none for the model itself)."""
    own = ROOT / "configs" / dataset_name / f"{key}.toml"
    if own.exists():
        return own, []
    base = base_key(key)
    return (ROOT / "configs" / dataset_name / f"{base}.toml",
            [f"{k}={v}" for k, v in TWIN_OVERRIDES.get(key[len(base):], {}).items()])


def _planned_config(dataset: "Dataset", key: str, quick: bool, extra: Sequence[str]) -> tuple:
    """The config run ``key`` trains with on ``dataset`` (its file, the dataset's paths, ``quick``'s
    settings, the twin's and ``extra`` overrides), read and checked as training would
    (:func:`lisa_tf.config.validate_config`), and how it was made, for the log. A parser learns the
    UD trees shipped beside the open data, else the head-rule conversion of the treebank's
    constituency trees (:mod:`data_pipeline.splits`).

    Raises:
        ConfigError: the config file cannot be read or is not valid; the message names the file.
    """
    from lisa_tf.config import ConfigError, load_config, validate_config

    config_path, twin = _config_source(dataset.name, key)
    overrides = [f"data.format={dataset.format}", f"data.train={dataset.train}", f"data.dev={dataset.dev}"]
    if base_key(key) == "parser" and dataset.name == "open":
        base = ROOT / "data" / "propbank-ewt"  # the UD trees of the same sentences
        overrides = ["data.format=conllu", f"data.train={base / 'train.conllu.gz'}", f"data.dev={base / 'dev.conllu.gz'}"]
    if quick:
        overrides += [f"{k}={v}" for k, v in {**QUICK, **(PARSER_QUICK if base_key(key) == "parser" else {})}.items()]
    name = config_path.relative_to(ROOT)
    try:
        config = load_config(config_path, overrides + twin + list(extra))
        validate_config(config)
    except ConfigError as error:
        message = str(error).replace(str(config_path), str(name))
        raise ConfigError(message if message.startswith(str(name)) else f"{name} (run {key}): {message}") from None
    return config, " + ".join([str(name), *twin, *extra])


class DatasetLayoutError(UserError):
    """The data directory does not hold what the dataset needs (the message lists what and where)."""


@dataclasses.dataclass
class Dataset:
    name: str
    format: str
    train: str
    dev: str
    tests: dict
    external_parses: dict = dataclasses.field(default_factory=dict)
    #: where ``external_parses`` come from: ``"external"`` (--parse-dir) or ``"D&M"`` (the trained parser)
    parse_source: str = "external"


def _need(paths: dict, hint: str) -> None:
    missing = [f"  {what}: {path}" for what, path in paths.items() if not pathlib.Path(path).exists()]
    if missing:
        raise DatasetLayoutError("missing data:\n" + "\n".join(missing) + "\n" + hint)


def locate(name: str, data_dir: Optional[str], parse_dir: Optional[str]) -> Dataset:
    """Where a dataset's splits are, checked up front with a message naming every missing file."""
    if name == "open":
        base = ROOT / "data" / "propbank-ewt"
        splits = {s: str(base / f"{s}.gold_conll.gz") for s in ("train", "dev", "test")}
        _need(splits, "PropBank-EWT ships in data/propbank-ewt; rebuild it with python -m data_pipeline.open_corpus")
        dataset = Dataset("open", "conll12", splits["train"], splits["dev"], {"test": splits["test"]})
    elif name == "conll05":
        if not data_dir:
            raise DatasetLayoutError("conll05 needs --data-dir DIR: the conll05st-release directory")
        base = pathlib.Path(data_dir)
        splits = {"train": base / "train", "dev": base / "devel", "wsj": base / "test.wsj", "brown": base / "test.brown"}
        layers = {f"{k}/{layer}/": v / layer for k, v in splits.items() for layer in ("words", "props", "synt.cha")}
        _need(layers, "expected the official conll05st-release layout (props/synt.cha from the CoNLL-2005 release at "
              "https://www.cs.upc.edu/~srlconll/; train/devel words extracted from your Penn Treebank WSJ "
              "sections 02-21 and 24; test.wsj/test.brown words from conll05st-tests.tar.gz)")
        dataset = Dataset("conll05", "conll05", str(splits["train"]), str(splits["dev"]),
                          {"wsj": str(splits["wsj"]), "brown": str(splits["brown"])})
    elif name == "conll12":
        if not data_dir:
            raise DatasetLayoutError("conll12 needs --data-dir DIR holding train/, development/ and test/")
        base = pathlib.Path(data_dir)
        splits = {"train": base / "train", "dev": base / "development", "test": base / "test"}
        _need(splits, "expected OntoNotes 5.0 *.gold_conll files in the CoNLL-2012 standard split (train/, "
              "development/, test/; produced by the CoNLL-2012 skeleton2conll scripts from LDC2013T19)")
        dataset = Dataset("conll12", "conll12", str(splits["train"]), str(splits["dev"]), {"test": str(splits["test"])})
    else:
        raise DatasetLayoutError(f"unknown dataset {name!r}; expected open, conll05 or conll12")
    if parse_dir:
        for split in ["dev", *dataset.tests]:
            path = pathlib.Path(parse_dir) / f"{split}.conllu"
            if path.exists():
                dataset.external_parses[split] = str(path)
    return dataset


def _trained(summary: dict) -> dict:
    """What a run's results depend on: how far it trained and which weights it keeps as its best."""
    return {"steps": summary["steps"], "best_step": summary.get("best_step")}


def _cached(path: pathlib.Path, compute, trained: dict, still_valid=lambda value: True):
    """The result in ``path`` while the run it scores is the one ``trained`` describes (:func:`_trained`),
    else ``compute()`` written there: a run trained further since (a time budget, then resumed) is scored
    again."""
    if path.exists():
        value = json.loads(path.read_text())
        if value.get("trained") == trained and still_valid(value):
            return value
    value = {**compute(), "trained": trained}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=2) + "\n")
    return value


def _exported(run_dir: pathlib.Path, base: pathlib.Path, trained: dict, export) -> pathlib.Path:
    """The version directory under the model base path ``base`` holding ``run_dir``'s export as
    ``trained`` describes it (recorded in ``base/trained.json``); a run trained further since is
    exported as the next version (``export(run_dir, version_dir)``), the one a server loads."""
    record = base / "trained.json"
    versions = sorted(int(p.name) for p in base.glob("*") if p.name.isdigit()) if base.exists() else []
    if versions and record.exists() and json.loads(record.read_text()) == {"version": versions[-1], **trained}:
        return base / str(versions[-1])
    version = base / str(versions[-1] + 1 if versions else 1)
    print(f"   exporting -> {version}", flush=True)
    export(run_dir, version)
    record.write_text(json.dumps({"version": int(version.name), **trained}) + "\n")
    return version


def _rest_smoke(export_base: pathlib.Path, model_name: str, layout: str) -> dict:
    from export.rest_server import make_server

    server = make_server(model_name, export_base, port=0, warn=lambda m: None)
    server.start_in_thread()
    try:
        instance = {"tokens": ["The", "company", "said", "it", "expects", "growth", "."]}
        if layout == "predicate":
            instance["predicate_index"] = 2
        body = json.dumps({"instances": [instance]}).encode()
        started = time.time()
        request = urllib.request.Request(f"http://127.0.0.1:{server.port}/v1/models/{model_name}:predict", data=body)
        with urllib.request.urlopen(request, timeout=120) as response:
            answer = json.loads(response.read())
        return {"status": response.status, "seconds": round(time.time() - started, 3), "prediction": answer["predictions"][0]}
    finally:
        server.stop()


def plan_runs(models: Optional[list] = None, all_models: bool = False, contextual: bool = False,
              parse_dir: Optional[str] = None) -> tuple:
    """The run keys a study trains, in order, and the D&M parsers trained before them: ``(models, parsers)``.

    ``models`` (default: the papers' four, with ``all_models`` DeepAtt-RNN and -CNN too) may name twins
    (``lisa_minilm``); ``contextual`` adds, after each model, its twins with MiniLM word vectors, frozen
    and fine-tuned. Each LISA gets its parser's twin ("lisa" the GloVe parser, "lisa_finetune" the
    fine-tuned one), unless ``parse_dir`` gives the parses.

    Raises:
        DatasetLayoutError: a name in ``models`` is not a model of the study.
    """
    if models is None:
        models = ["sa", "lisa", "deepatt_ffn", "selective"] + (["deepatt_rnn", "deepatt_cnn"] if all_models else [])
    unknown = [m for m in models if base_key(m) not in NAMES or base_key(m) == "parser"]
    if unknown:
        raise DatasetLayoutError(f"--models: unknown model {unknown[0]!r}; expected some of "
                                 f"{', '.join(k for k in NAMES if k != 'parser')}, or one of their twins "
                                 f"(KEY{', KEY'.join(TWINS)})")
    if contextual:
        models = with_twins(models)
    models = list(dict.fromkeys(models))
    parsers = ["parser" + s for s in ("", *TWINS) if "lisa" + s in models] if parse_dir is None else []
    return models, parsers


def run_experiments(dataset_name: str, data_dir: Optional[str] = None, parse_dir: Optional[str] = None,
                    quick: bool = False, out: Optional[str] = None, all_models: bool = False,
                    models: Optional[list] = None, contextual: bool = False,
                    extra: Sequence[str] = ()) -> dict:
    """Run the study; returns the results dict also written to ``OUT/results.json``.

    ``contextual`` adds, after each model, its twins with MiniLM word vectors, frozen and fine-tuned
    (run keys ``KEY_minilm``, ``KEY_finetune``).
    ``extra`` (``section.key=value``) apply to every model trained, the parsers included, after
    the configs and ``quick``'s settings (``--set``: e.g. fewer steps for a smoke test)."""
    from export.saved_model import export_run
    from lisa_tf.evaluation.plots import f1_by_length, plot_curves_grid, plot_f1_by_length
    from lisa_tf.training.curves import read_metrics
    from lisa_tf.evaluation.runs import evaluate_runs
    from lisa_tf.training.loop import train

    dataset = locate(dataset_name, data_dir, parse_dir)
    out = pathlib.Path(out or ROOT / "results" / (dataset_name + ("-quick" if quick else "")))
    models, parsers = plan_runs(models, all_models, contextual, parse_dir)
    splits = {"dev": dataset.dev, **dataset.tests}
    results: dict = {"dataset": dataset_name, "quick": quick, "models": {}}
    started = time.time()
    length_series = {}
    twin_parses: dict = {}  # per twin suffix, its parser twin's parse of each split, for LISA's twin
    # every config of the plan, read and checked before the first training starts
    planned = {key: _planned_config(dataset, key, quick, extra) for key in parsers + models}
    out.mkdir(parents=True, exist_ok=True)
    if parse_dir is None and any(base_key(m) == "lisa" for m in models):
        if "lisa" in models:
            results["parser"], dataset.external_parses = _dm_parses(dataset, splits, out, quick, planned["parser"])
        dataset.parse_source = results["parse_source"] = "D&M"
        for suffix in (s for s in TWINS if "lisa" + s in models):
            twin = "parser" + suffix
            results[twin], twin_parses[suffix] = _dm_parses(dataset, splits, out, quick, planned[twin], twin)
    for key in models:
        base = base_key(key)
        config, source = planned[key]
        run_dir = out / "runs" / key
        print(f"== {model_name(key)}: training ({source}) -> {run_dir}", flush=True)
        summary = train(config, run_dir)
        entry = {"name": model_name(key), "run": str(run_dir), "train": summary, "eval": {}, "set": list(extra)}
        limit = config.data.max_eval_sentences if quick else 0
        for split, path in splits.items():
            # Predicted predicates: LISA/SA find their own; DeepAtt/Selective with their predicate identifier.
            conditions = {"predicted": {}} if base in ("sa", "lisa") or config.model.predicate_identifier_layers else {}
            conditions["gold_predicates"] = {"gold_predicates": True}
            if base == "lisa":
                conditions["gold_parse"] = {"gold_parse": True}
                parses = twin_parses.get(key[len(base):]) or dataset.external_parses
                if split in parses:
                    conditions["external_parse"] = {"parse": parses[split]}
            for condition, options in conditions.items():
                target = out / "eval" / key / f"{split}.{condition}.json"
                print(f"   evaluating {split} ({condition})", flush=True)

                def compute():
                    metrics, gold, predicted = evaluate_runs([str(run_dir)], path, limit=limit,
                                                             return_sentences=True, **options)
                    metrics["f1_by_length"] = f1_by_length(gold, predicted)
                    return metrics

                # A "predicted" result of DeepAtt/Selective saved before they identified predicates
                # holds gold-predicate scores, one written by ``evaluate --out`` has no F1 by length,
                # one with another parse file injected is another condition, and one whose parsing
                # scores lack UAS scored what the model does not predict (the data's own POS tags
                # passed through): recomputed.
                wanted = condition == "gold_predicates"
                parse = f"parse {options['parse']}" if "parse" in options else None

                def still_valid(value):
                    return (value.get("gold_predicates") == wanted and "f1_by_length" in value
                            and (parse is None or value.get("condition") == parse)
                            and "uas" in value.get("parsing", {"uas": None}))

                entry["eval"][f"{split}.{condition}"] = _cached(target, compute, _trained(summary), still_valid)
        if base in ("sa", "lisa"):
            length_series[entry["name"]] = entry["eval"]["dev.predicted"]["f1_by_length"]
            if base == "lisa":
                length_series[entry["name"] + " + gold parse"] = entry["eval"]["dev.gold_parse"]["f1_by_length"]
                if "dev.external_parse" in entry["eval"]:
                    parse = " + D&M parse" if dataset.parse_source == "D&M" else " + external parse"
                    length_series[entry["name"] + parse] = entry["eval"]["dev.external_parse"]["f1_by_length"]
        export_dir = _exported(run_dir, out / "exports" / key, _trained(summary), export_run)
        layout = "sentence" if base in ("sa", "lisa") else "predicate"
        # served once per export version: a later invocation with the same export reads the answer it got
        entry["rest"] = _cached(export_dir.parent / "rest.json", lambda: _rest_smoke(export_dir.parent, key, layout),
                                {**_trained(summary), "version": int(export_dir.name)})
        print(f"   REST {entry['rest']['status']} in {entry['rest']['seconds']} s", flush=True)
        results["models"][key] = entry
    results["seconds"] = round(time.time() - started, 1)
    results.setdefault("parse_source", dataset.parse_source if dataset.external_parses else None)
    plot_curves_grid({model_name(k): read_metrics(out / "runs" / k / "metrics.jsonl") for k in models}, out / "curves.png")
    if length_series:
        plot_f1_by_length(length_series, out / "f1_by_length.png")
    if "lisa" in models:
        _syntax_heatmap(out / "runs" / "lisa", dataset, out / "syntax_head.png")
    from lisa_tf.evaluation.report import results_markdown

    (out / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    (out / "results.md").write_text(results_markdown(results, list(splits)))
    print((out / "results.md").read_text())
    return results


def _syntax_heatmap(run_dir: pathlib.Path, dataset: Dataset, png: pathlib.Path) -> None:
    """LISA's syntax head on one dev sentence, against the gold parse."""
    from data_pipeline.dataset import make_dataset
    from data_pipeline.splits import read_split
    from lisa_tf.evaluation.plots import plot_attention_heatmap
    from lisa_tf.models.runs import load_run, load_run_config

    model, config = load_run(run_dir), load_run_config(run_dir)
    sentences = [s for s in read_split(dataset.dev, config.data.format, None, 200) if 8 <= len(s) <= 16 and s.heads][:1]
    if not sentences or not getattr(model, "uses_syntax", False):
        return
    batch = next(iter(make_dataset(sentences, model.vocabularies(), layout=model.layout, shuffle=False,
                                   unknown_labels="map", preprocess=model.preprocessor)[0]))
    weights = model.attention_weights(batch)[config.model.parse_attention_layer]
    plot_attention_heatmap(weights.numpy()[0, config.model.parse_head], sentences[0].words, sentences[0].heads, png,
                           title="LISA syntax head (predicted parse) vs gold heads (red)")


def _dm_parses(dataset: Dataset, splits: dict, out: pathlib.Path, quick: bool, planned: tuple,
               key: str = "parser") -> tuple:
    """Train the Dozat & Manning parser (run ``OUT/runs/KEY``; ``parser_minilm``, ``parser_finetune``: its
    twins) and parse every split's words into ``OUT/parses/SPLIT.conllu`` (``SPLIT_minilm.conllu``, …), the
    paper's "+D&M" parses. Returns the parser's entry (its training summary and, per split, UAS/LAS/POS
    against the split's gold trees, punctuation excluded, with the parsing time) and the parse file of
    each split."""
    from data_pipeline.splits import read_split
    from lisa_tf.evaluation.parse_eval import parse_scores
    from lisa_tf.labelling.parse import conllu_lines, parse_sentences
    from lisa_tf.models.runs import load_run
    from lisa_tf.training.loop import train

    config, source = planned
    run_dir = out / "runs" / key
    print(f"== {model_name(key)}: training ({source}) -> {run_dir}", flush=True)
    summary = train(config, run_dir)
    entry = {"name": model_name(key), "run": str(run_dir), "train": summary, "eval": {}}
    limit = config.data.max_eval_sentences if quick else 0
    model = None
    parses = {}
    for split, path in splits.items():
        conllu = out / "parses" / f"{split}{key.removeprefix('parser')}.conllu"

        def compute():
            nonlocal model
            model = model or load_run(run_dir)
            print(f"   parsing {split} -> {conllu}", flush=True)
            gold = read_split(path, dataset.format, None, limit)
            started = time.perf_counter()
            parsed = parse_sentences(model, gold, token_budget=config.train.batch_tokens)
            seconds = time.perf_counter() - started
            conllu.parent.mkdir(parents=True, exist_ok=True)
            conllu.write_text("\n".join(conllu_lines(parsed)) + "\n")
            return {**parse_scores(gold, parsed, model.dep_labels), "sentences": len(parsed), "seconds": round(seconds, 2),
                    "sentences_per_second": round(len(parsed) / seconds, 1)}

        entry["eval"][f"{split}.parse"] = _cached(out / "eval" / key / f"{split}.json", compute, _trained(summary),
                                                  lambda value: conllu.exists())
        parses[split] = str(conllu)
    return entry, parses
