"""run_experiments end to end: ``open --quick --contextual`` on the shipped data (``conll05 --quick``:
tests/test_experiments_conll05.py, a file of its own so that the two long runs go to different test
workers)."""

import json
import os
import pathlib
import subprocess
import sys

import pytest

from tests.conftest import ROOT


#: Fewer steps, sentences, tokens per batch and layers than --quick's (``--set``, after --quick's
#: settings): the tests check that every run goes through training, evaluation, export and a REST
#: request, not the models. One evaluation (step 4) is enough for the curves and the best weights.
SMOKE = ["--set", "train.max_steps=4", "train.eval_every=4", "train.batch_tokens=256",
         "data.max_train_sentences=40", "data.max_eval_sentences=10", "model.num_layers=2", "model.pos_layer=0",
         "model.parse_layer=0", "model.parse_attention_layer=1"]


def _run(args, tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT), TF_CPP_MIN_LOG_LEVEL="2")
    return subprocess.run([sys.executable, "-W", "ignore", "-m", "lisa_tf", "experiments", *args],
                          capture_output=True, text=True, env=env, timeout=1200, cwd=tmp_path)


def _check_results(out: pathlib.Path, splits, models):
    """The results of a run of ``models`` (LISA among them, or only its twins) with the D&M parses."""
    from lisa_tf.evaluation.report import base_key
    from lisa_tf_cli.experiments import model_name

    results = json.loads((out / "results.json").read_text())
    assert set(results["models"]) == set(models)
    for key, entry in results["models"].items():
        assert entry["rest"]["status"] == 200
        for split in splits:
            scores = entry["eval"][f"{split}.predicted"]["srl"]
            assert 0.0 <= scores["f1"] <= 100.0
    # no --parse-dir: the D&M parser (and each LISA twin's parser twin) was trained and its parse of
    # each split given to its LISA
    assert results["parse_source"] == "D&M"
    text = (out / "results.md").read_text()
    for fragment in ("SRL, predicted predicates", "SRL, gold predicates", "Parsing", "Predicate detection"):
        assert fragment in text
    for key in (k for k in models if base_key(k) == "lisa"):
        twin = key[len("lisa"):]
        lisa = results["models"][key]["eval"]
        assert "uas" in lisa["dev.predicted"]["parsing"], key
        for split in splits:
            parse = out / "parses" / f"{split}{twin}.conllu"
            assert parse.exists() and 0.0 <= results["parser" + twin]["eval"][f"{split}.parse"]["uas"] <= 100.0
            assert f"{split}.gold_parse" in lisa
            assert lisa[f"{split}.external_parse"]["condition"] == f"parse {parse}", (key, split)
        for row in (f"| {model_name(key)} |", f"| {model_name(key)} + gold parse |",
                    f"| {model_name(key)} + D&M parse |", f"| {model_name('parser' + twin)} (Dev) |"):
            assert row in text, row
    pictures = ("curves.png", "f1_by_length.png") + (("syntax_head.png",) if "lisa" in models else ())
    for png in pictures:
        assert (out / png).stat().st_size > 1000, png
    return results


@pytest.mark.slow(minutes=3.3)
def test_open_quick_contextual_end_to_end_and_resume(tmp_path):
    """LISA's twins with MiniLM word vectors, frozen and fine-tuned, with the D&M parser's twins (each
    LISA twin is given its parser twin's parse). LISA itself and its D&M parser run in the conll05 and
    conll12 tests, a predicate model in the conll05 one, and ``--contextual``'s plan (each model followed
    by its twins) is checked in ``test_contextual_adds_each_models_twins_after_it``; SA is LISA with
    syntax off (tests/models/test_lisa.py)."""
    out = tmp_path / "open"
    models = ("lisa_minilm", "lisa_finetune")
    args = ["open", "--quick", "--out", str(out), "--models", *models, *SMOKE]
    first = _run(args, tmp_path)
    assert first.returncode == 0, first.stderr[-3000:]
    results = _check_results(out, ["dev", "test"], models)
    for key, trainable in (("lisa_minilm", False), ("lisa_finetune", True)):
        for run in (key, key.replace("lisa", "parser")):
            model = json.loads((out / "runs" / run / "config.json").read_text())["model"]
            assert (model["contextual"], model["contextual_trainable"]) == ("minilm", trainable), run
    assert not (out / "runs" / "lisa").exists() and not (out / "runs" / "parser").exists()
    # a second invocation finds everything done and recomputes nothing
    second = _run(args, tmp_path)
    assert second.returncode == 0, second.stderr[-3000:]
    assert "training already finished" in second.stdout and "exporting" not in second.stdout
    again = json.loads((out / "results.json").read_text())["models"]
    assert all(again[key]["eval"] == results["models"][key]["eval"] for key in models)
    # the unchanged exports are not served again: the REST answers, their times included, are the first run's
    assert all(again[key]["rest"] == results["models"][key]["rest"] for key in again)


def test_contextual_adds_each_models_twins_after_it():
    """``--contextual``: each model followed by its frozen and fine-tuned MiniLM twins, and each LISA
    by its parser's twin; twins can also be named alone; a parse directory replaces the parsers."""
    from lisa_tf_cli.experiments import DatasetLayoutError, plan_runs

    assert plan_runs(["lisa", "sa"], contextual=True) == (
        ["lisa", "lisa_minilm", "lisa_finetune", "sa", "sa_minilm", "sa_finetune"],
        ["parser", "parser_minilm", "parser_finetune"])
    assert plan_runs(["lisa_finetune", "deepatt_ffn"]) == (["lisa_finetune", "deepatt_ffn"], ["parser_finetune"])
    assert plan_runs(["lisa"], contextual=True, parse_dir="parses")[1] == []
    assert plan_runs() == (["sa", "lisa", "deepatt_ffn", "selective"], ["parser"])
    assert plan_runs(all_models=True)[0][-2:] == ["deepatt_rnn", "deepatt_cnn"]
    for wrong in ("parser", "parser_minilm", "lisa_glove"):
        with pytest.raises(DatasetLayoutError, match=f"unknown model '{wrong}'"):
            plan_runs([wrong])


def test_the_contextual_flag_reaches_the_study(monkeypatch):
    from lisa_tf_cli import experiments
    from lisa_tf_cli.main import main

    calls = []
    monkeypatch.setattr(experiments, "run_experiments", lambda *args: calls.append(args))
    assert main(["experiments", "open", "--models", "lisa", "--contextual"]) == 0
    assert calls[0][6:8] == (["lisa"], True)


def test_a_run_trained_further_is_scored_and_exported_again(tmp_path):
    """A run stopped by its time budget and resumed by a second invocation is evaluated again and exported
    as the next version; the same run is not (its results and export are kept)."""
    from lisa_tf_cli.experiments import _cached, _exported, _trained

    first, further = _trained({"steps": 500, "best_step": 500}), _trained({"steps": 900, "best_step": 750})
    computed = []

    def compute():
        computed.append(1)
        return {"f1": float(len(computed))}

    target = tmp_path / "eval" / "dev.predicted.json"
    assert _cached(target, compute, first)["f1"] == 1.0
    assert _cached(target, compute, first)["f1"] == 1.0 and len(computed) == 1
    assert _cached(target, compute, further) == {"f1": 2.0, "trained": further}
    assert json.loads(target.read_text())["trained"] == further

    exports = []

    def export(run, version):
        exports.append(version.name)
        version.mkdir(parents=True)
        (version / "saved_model.pb").write_bytes(b"")

    base = tmp_path / "exports" / "lisa"
    assert _exported(tmp_path / "run", base, first, export) == base / "1"
    assert _exported(tmp_path / "run", base, first, export) == base / "1" and exports == ["1"]
    assert _exported(tmp_path / "run", base, further, export) == base / "2" and exports == ["1", "2"]
    assert _exported(tmp_path / "run", base, further, export) == base / "2" and exports == ["1", "2"]
