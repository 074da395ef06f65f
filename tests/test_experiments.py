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
    results = json.loads((out / "results.json").read_text())
    assert set(results["models"]) == set(models)
    for key, entry in results["models"].items():
        assert entry["rest"]["status"] == 200
        for split in splits:
            scores = entry["eval"][f"{split}.predicted"]["srl"]
            assert 0.0 <= scores["f1"] <= 100.0
    lisa = results["models"]["lisa"]["eval"]
    # no --parse-dir: the D&M parser was trained and its parse of each split injected
    assert results["parse_source"] == "D&M"
    for key in (k for k in models if k.startswith("lisa")):
        assert {f"{s}.{c}" for s in splits for c in ("gold_parse", "external_parse")} <= set(results["models"][key]["eval"])
    for split in splits:
        assert 0.0 <= results["parser"]["eval"][f"{split}.parse"]["uas"] <= 100.0
        assert (out / "parses" / f"{split}.conllu").exists()
    assert "uas" in lisa["dev.predicted"]["parsing"]
    text = (out / "results.md").read_text()
    for fragment in ("SRL, predicted predicates", "SRL, gold predicates", "LISA + gold parse", "LISA + D&M parse", "D&M parser", "Parsing",
                     "Predicate detection"):
        assert fragment in text
    for png in ("curves.png", "f1_by_length.png", "syntax_head.png"):
        assert (out / png).stat().st_size > 1000, png
    return results


@pytest.mark.slow(minutes=4.0)
def test_open_quick_contextual_end_to_end_and_resume(tmp_path):
    """LISA and its twins with MiniLM word vectors, frozen and fine-tuned (``--contextual``), with the D&M
    parser and its twins; a predicate
    model runs in the conll05 test below (SA is LISA with syntax off: tests/models/test_lisa.py)."""
    out = tmp_path / "open"
    args = ["open", "--quick", "--out", str(out), "--models", "lisa", "--contextual", *SMOKE]
    first = _run(args, tmp_path)
    assert first.returncode == 0, first.stderr[-3000:]
    results = _check_results(out, ["dev", "test"], ("lisa", "lisa_minilm", "lisa_finetune"))
    for key, contextual, trainable in (("lisa", "", False), ("lisa_minilm", "minilm", False),
                                       ("lisa_finetune", "minilm", True)):
        model = json.loads((out / "runs" / key / "config.json").read_text())["model"]
        assert (model["contextual"], model["contextual_trainable"]) == (contextual, trainable), key
    text = (out / "results.md").read_text()
    for twin in ("+ MiniLM", "+ MiniLM fine-tuned"):
        for row in (f"| LISA {twin} |", f"| LISA {twin} + gold parse |", f"| LISA {twin} + D&M parse |",
                    f"| D&M parser {twin} (Dev) |"):
            assert text.count(row) >= 1, row
    # the D&M parser's twins have MiniLM vectors too, and each one's parse is the one its LISA twin is given
    for suffix, trainable in (("_minilm", False), ("_finetune", True)):
        model = json.loads((out / "runs" / f"parser{suffix}" / "config.json").read_text())["model"]
        assert (model["contextual"], model["contextual_trainable"]) == ("minilm", trainable)
        for split in ("dev", "test"):
            twin_parse = out / "parses" / f"{split}{suffix}.conllu"
            assert twin_parse.exists() and 0.0 <= results[f"parser{suffix}"]["eval"][f"{split}.parse"]["uas"] <= 100.0
            assert results["models"][f"lisa{suffix}"]["eval"][f"{split}.external_parse"]["condition"] == f"parse {twin_parse}"
    for split in ("dev", "test"):
        assert results["models"]["lisa"]["eval"][f"{split}.external_parse"]["condition"] == f"parse {out / 'parses' / f'{split}.conllu'}"
    # a second invocation finds everything done and recomputes nothing
    second = _run(args, tmp_path)
    assert second.returncode == 0, second.stderr[-3000:]
    assert "training already finished" in second.stdout and "exporting" not in second.stdout
    again = json.loads((out / "results.json").read_text())["models"]
    assert all(again[key]["eval"] == results["models"][key]["eval"] for key in ("lisa_minilm", "lisa_finetune"))
    # the unchanged exports are not served again: the REST answers, their times included, are the first run's
    assert all(again[key]["rest"] == results["models"][key]["rest"] for key in again)


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
