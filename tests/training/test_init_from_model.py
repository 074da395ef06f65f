"""``train --init MODEL``: a run that starts from a trained model, its vocabularies grown by the new
data's entries and its weights copied into the leading blocks (lisa_tf.training.init_from_model)."""

from __future__ import annotations


import numpy as np
import pytest

from data_pipeline.vocab import Vocabularies
from lisa_tf.models.runs import load_run, load_run_config
from lisa_tf_cli.main import main
from tests.conftest import DATA


def test_a_run_from_a_model_keeps_its_rows_and_adds_the_new_datas(lisa_run, tmp_path, capsys, monkeypatch):
    from lisa_tf.training import init_from_model

    started = []  # the run's weights right after the copy, before its first step
    copy = init_from_model.copy_weights

    def copy_and_keep(source, target):
        counts = copy(source, target)
        started.extend(np.array(w) for w in target.weights)
        return counts

    monkeypatch.setattr(init_from_model, "copy_weights", copy_and_keep)
    new_data = DATA / "propbank-ewt" / "dev.gold_conll.gz"  # other sentences, other words and labels
    run = tmp_path / "adapted"
    assert main(["train", "--init", str(lisa_run), "--out", str(run), "--verbose", "0", f"data.train={new_data}",
                 f"data.dev={new_data}", "data.max_train_sentences=40", "data.max_eval_sentences=10",
                 "train.max_steps=2", "train.eval_every=2"]) == 0
    out = capsys.readouterr().out
    assert "starting from" in out and "weights copied" in out
    config, original = load_run_config(run), load_run_config(lisa_run)
    assert config.model == original.model and config.train.init == str(lisa_run)
    assert config.train.learning_rate == pytest.approx(init_from_model.LEARNING_RATE_SCALE * original.train.learning_rate)
    assert config.train.warmup_steps == 50 and config.train.max_steps == 2  # adaptation, then the overrides
    old, new = Vocabularies.load(lisa_run / "vocab"), Vocabularies.load(run / "vocab")
    for name in ("words", "srl", "pos", "dep_labels"):
        before, after = getattr(old, name).entries, getattr(new, name).entries
        assert after[: len(before)] == before, name  # every old entry keeps its index
    assert len(new.words) > len(old.words) + 50
    # at step 0 the run's model is the old one with new rows: the old ones exactly as trained
    trained = load_run(lisa_run)
    grown = 0
    assert len(started) == len(trained.weights)
    for a, b in zip(trained.weights, started):
        a = np.asarray(a)
        np.testing.assert_array_equal(b[tuple(slice(0, n) for n in a.shape)], a)
        grown += a.shape != b.shape
    assert grown >= 2  # the word embeddings and at least one output layer


def test_a_model_of_other_settings_or_without_settings_is_refused(lisa_run, tmp_path, capsys):
    from tests.conftest import ROOT

    assert main(["train", "--init", str(lisa_run), "--out", str(tmp_path / "a"), "model.num_layers=6"]) == 2
    assert "another model (model.num_layers is 2" in capsys.readouterr().err
    assert main(["train", "--init", str(lisa_run / "model.keras"), "--out", str(tmp_path / "b")]) == 2
    assert "records no settings; give --config" in capsys.readouterr().err
    assert main(["train", "--init", "no-such-model", "--out", str(tmp_path / "c")]) == 2
    assert "train.init no-such-model: no such file or directory" in capsys.readouterr().err
    assert not any((tmp_path / name).exists() for name in "abc")


def test_the_starting_model_is_scored_as_step_0_and_kept_when_training_does_not_beat_it(lisa_run, tmp_path, capsys):
    """A learning rate that wrecks the model: the run's best (and finished) weights stay the starting model's;
    a run killed before its first checkpoint starts from the model again, not from random weights."""
    import json

    new_data = DATA / "propbank-ewt" / "dev.gold_conll.gz"
    run = tmp_path / "adapted"
    args = ["train", "--init", str(lisa_run), "--out", str(run), "--verbose", "0", f"data.train={new_data}",
            f"data.dev={new_data}", "data.max_train_sentences=40", "data.max_eval_sentences=10",
            "train.max_steps=2", "train.eval_every=2", "train.warmup_steps=1", "train.learning_rate=1000"]
    assert main(args) == 0
    records = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records] == [0, 2]
    assert "step 0: the starting model" in capsys.readouterr().out
    assert json.loads((run / "done.json").read_text())["best_step"] == 0
    trained, finished = load_run(lisa_run), load_run(run)
    for a, b in zip(trained.weights, finished.weights):
        a = np.asarray(a)
        np.testing.assert_array_equal(np.asarray(b)[tuple(slice(0, n) for n in a.shape)], a)
    # the same run killed before any checkpoint (its vocabularies written): it starts from the model again
    import shutil

    for name in ("checkpoints", "best", "done.json", "metrics.jsonl"):
        path = run / name
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    assert main(args) == 0
    assert "weights copied" in capsys.readouterr().out
    assert json.loads((run / "done.json").read_text())["best_step"] == 0


def test_init_without_data_dev_says_whose_dev_data_picks_the_best_weights(tmp_path, capsys):
    """``train --init srl`` without ``data.dev`` keeps the shipped model's dev set (web text): a line
    names that file and how to give one's own; with ``data.dev=FILE`` no such line."""
    from lisa_tf.packages.finding import DEFAULT_SRL
    from lisa_tf_cli.commands.train import checked_config

    mine = DATA / "propbank-ewt" / "test.gold_conll.gz"
    config = checked_config(None, [f"data.train={mine}"], tmp_path / "a", init=str(DEFAULT_SRL))
    out = capsys.readouterr().out
    assert config.data.dev.endswith("dev.gold_conll.gz")
    assert out.splitlines() == [f"note: --init {DEFAULT_SRL} without data.dev: the best weights are picked on the model's "
                                f"own dev data, {config.data.dev}, not on yours; give data.dev=FILE to pick them on "
                                "your data"]
    config = checked_config(None, [f"data.train={mine}", f"data.dev={mine}"], tmp_path / "b", init=str(DEFAULT_SRL))
    assert config.data.dev == str(mine) and "data.dev" not in capsys.readouterr().out
