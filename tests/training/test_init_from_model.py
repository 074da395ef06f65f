"""``train --init MODEL``: a run that starts from a trained model, its vocabularies grown by the new
data's entries and its weights copied into the leading blocks (lisa_tf.training.init_from_model)."""

from __future__ import annotations

import dataclasses

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
                 "train.max_steps=2", "train.eval_every=2", "model.word_dropout=0.1", "model.sense_loss_weight=0.5"]) == 0
    out = capsys.readouterr().out
    assert "starting from" in out and "weights copied" in out
    config, original = load_run_config(run), load_run_config(lisa_run)
    # settings that shape no weight may be the run's own (here word dropout and a loss weight); the rest are the model's
    assert original.model.word_dropout == 0.0 and original.model.sense_loss_weight == 1.0
    assert config.model == dataclasses.replace(original.model, word_dropout=0.1, sense_loss_weight=0.5)
    assert config.train.init == str(lisa_run)
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


# ------------------------------------------------------------ new rows that change no prediction
EWT = DATA / "propbank-ewt"


def _probabilities(model, sentences, vocabs) -> list[dict]:
    """Every probability ``model.predict_scores`` gives for ``sentences``, batch by batch (numpy)."""
    from data_pipeline.dataset import inference_batches

    return [{key: np.asarray(value) for key, value in model.predict_scores(model.preprocessor(batch)).items()}
            for batch in inference_batches(sentences, vocabs, model.layout)]


def test_step_0_is_the_starting_models_own_score_when_the_data_grows_tags(lisa_run, tmp_path, monkeypatch):
    """Fine-tuning the tiny LISA model (trained on EWT's first 20 training sentences) on 60 other EWT
    sentences grows its SRL tags, rolesets, POS and dependency labels and words. Step 0 scores the
    starting model: the F1 ``evaluate`` gives it on the same dev sentences. At step 0 the grown model
    gives every old label (tag, roleset, POS, dependency label) and every arc the starting model's
    probability, on the dev sentences and on the new data's (new words in every one), and labels them
    alike; the rolesets it picks may differ only where the new data's lexicon gives a word its rolesets."""
    import dataclasses

    from data_pipeline.splits import read_split
    from lisa_tf.evaluation.runs import evaluate_runs
    from lisa_tf.labelling.batches import label_sentences
    from lisa_tf.training import init_from_model
    from lisa_tf.training.curves import read_metrics

    started = {}  # the run's model and its weights right after the copy, before its first step
    copy = init_from_model.copy_weights

    def copy_and_keep(source, target):
        counts = copy(source, target)
        started.update(model=target, weights=[np.array(w) for w in target.weights])
        return counts

    monkeypatch.setattr(init_from_model, "copy_weights", copy_and_keep)
    run = tmp_path / "adapted"
    assert main(["train", "--init", str(lisa_run), "--out", str(run), "--verbose", "0",
                 f"data.train={EWT / 'dev.gold_conll.gz'}", f"data.dev={EWT / 'train.gold_conll.gz'}",
                 "data.max_train_sentences=60", "data.max_eval_sentences=20", "train.max_steps=1",
                 "train.eval_every=1"]) == 0
    old, new = Vocabularies.load(lisa_run / "vocab"), Vocabularies.load(run / "vocab")
    for name in ("words", "srl", "senses", "pos", "dep_labels"):
        assert len(getattr(new, name)) > len(getattr(old, name)), name  # the data grows every vocabulary
    step_0 = next(r for r in read_metrics(run / "metrics.jsonl") if r["step"] == 0)
    own = evaluate_runs([str(lisa_run)], str(EWT / "train.gold_conll.gz"), limit=20)["srl"]["f1"]
    assert step_0["dev_f1"] == pytest.approx(own, abs=0.1)

    model, starting = started["model"], load_run(lisa_run)
    for variable, value in zip(model.weights, started["weights"]):
        variable.assign(value)
    sentences = read_split(str(EWT / "dev.gold_conll.gz"), "conll12", None, 60)  # the new words' sentences
    sentences += read_split(str(EWT / "train.gold_conll.gz"), "conll12", None, 20)
    for before, after in zip(_probabilities(starting, sentences, old), _probabilities(model, sentences, new)):
        assert before.keys() == after.keys()
        for key, value in before.items():
            np.testing.assert_allclose(after[key][..., : value.shape[-1]], value, rtol=1e-4, atol=1e-7, err_msg=key)

    def without_senses(labelled):
        return [dataclasses.replace(s, predicates=[dataclasses.replace(p, sense=None, sense_source=None)
                                                   for p in s.predicates]) for s in labelled]

    # the frame constraints follow the roleset chosen, which the lexicon picks: without them, the same labels
    labelled, _ = label_sentences(starting, sentences, constraints=False)
    labelled_grown, _ = label_sentences(model, sentences, new, constraints=False)
    assert without_senses(labelled_grown) == without_senses(labelled)


def _tiny_pair(kind: str, sentences: int = 20, more: int = 80):
    """An untrained tiny model of ``kind`` on the first ``sentences`` EWT training sentences, and the
    same model's architecture for its vocabularies grown by the next ``more`` (new words and labels)."""
    from data_pipeline.splits import read_split
    from lisa_tf.config import load_config
    from lisa_tf.models import build_model
    from tests.models.conftest import parser_overrides, tiny_overrides
    from tests.models.test_lisa import TINY_LISA

    overrides = parser_overrides() if kind == "parser" else tiny_overrides(**(TINY_LISA if kind == "lisa" else {
        "model.kind": kind, "model.decode": "viterbi", "model.predicate_identifier_layers": 1}))
    config = load_config(None, overrides)
    data = read_split(config.data.train, config.data.format, config.data.parse_train or None, sentences + more)
    vocabs = Vocabularies.build(data[:sentences])
    grown = vocabs.extended(Vocabularies.build(data))
    source, target = build_model(config.model, vocabs), build_model(config.model, grown)
    source.build_from_batch()
    target.build_from_batch()
    return source, target, grown, data


@pytest.mark.parametrize("kind", ["lisa", "deepatt", "selective", "parser"])
def test_grown_rows_leave_every_prediction_as_it_was(kind):
    """Every output a model predicts (SRL tags, rolesets, predicates, POS, heads, dependency labels) is
    the same after its vocabularies grow and its weights are copied, on sentences full of the new words:
    new words read the unknown word's row, new labels score below the old ones."""
    from lisa_tf.labelling.batches import label_sentences
    from lisa_tf.labelling.parse import parse_sentences
    from lisa_tf.training.init_from_model import copy_weights

    source, target, grown, data = _tiny_pair(kind)
    counts = copy_weights(source, target)
    assert counts["grown"] >= 3
    if kind == "parser":
        assert parse_sentences(target, data) == parse_sentences(source, data)
        return
    labelled, probabilities = label_sentences(source, data)
    labelled_grown, probabilities_grown = label_sentences(target, data, grown)
    assert labelled_grown == labelled
    for before, after in zip(probabilities, probabilities_grown):
        for position in before:
            np.testing.assert_allclose(after[position], before[position], rtol=1e-4)


def test_a_grown_output_layer_scores_new_labels_below_the_mean_of_the_old():
    """A Dense output layer: a new column scores the mean of the old columns' scores less the margin, for
    any input; a word table's new rows are the unknown word's; a weight not trained keeps the grown
    model's own values beyond the old block."""
    from data_pipeline.vocab import OOV_ID
    from lisa_tf.training.init_from_model import NEW_LABEL_MARGIN, grown_weight

    rng = np.random.default_rng(0)
    kernel, bias = rng.normal(size=(6, 4)).astype(np.float32), rng.normal(size=4).astype(np.float32)
    new_kernel = grown_weight(kernel, np.zeros((6, 7), np.float32), "srl_softmax/kernel")
    new_bias = grown_weight(bias, np.zeros(7, np.float32), "srl_softmax/bias")
    inputs = rng.normal(size=(50, 6)).astype(np.float32) * 10
    scores = inputs @ new_kernel + new_bias
    np.testing.assert_array_equal(scores[:, :4], inputs @ kernel + bias)
    expected = (inputs @ kernel + bias).mean(axis=1) - NEW_LABEL_MARGIN
    for column in range(4, 7):
        np.testing.assert_allclose(scores[:, column], expected, rtol=1e-5, atol=1e-4)
    table = rng.normal(size=(5, 3)).astype(np.float32)
    grown = grown_weight(table, np.zeros((9, 3), np.float32), "backbone/word_embedding/embeddings")
    np.testing.assert_array_equal(grown[:5], table)
    np.testing.assert_array_equal(grown[5:], np.repeat(table[OOV_ID:OOV_ID + 1], 4, axis=0))
    constraints = np.full((4, 4), -7.0, np.float32)
    kept = grown_weight(np.zeros((2, 2), np.float32), constraints, "lisa/transitions", trainable=False)
    assert (kept[:2, :2] == 0).all() and (kept[2:] == -7).all() and (kept[:, 2:] == -7).all()


def test_transition_statistics_and_sense_lexicon_keep_the_models(tmp_path):
    """Viterbi's tag-transition log-probabilities: the model's for its own tags, the new data's for
    transitions to and from a new tag. The word-form lexicon: each form's rolesets from both lexicons;
    a resumed run merges the one its ``model.keras`` recorded at step 0 again, to the same lexicon."""
    import json
    import zipfile
    from types import SimpleNamespace

    from lisa_tf.training.init_from_model import kept_transitions, merged_lexicon, run_lexicon

    source = SimpleNamespace(transitions=np.full((2, 2), -1.0, np.float32), start_transitions=np.full(2, -2.0, np.float32))
    matrix, start = kept_transitions(source, np.full((3, 3), -5.0), np.full(3, -6.0))
    np.testing.assert_array_equal(matrix, [[-1, -1, -5], [-1, -1, -5], [-5, -5, -5]])
    np.testing.assert_array_equal(start, [-2, -2, -6])
    old = {"forms": ["ran", "walked"], "candidates": [[0], []], "fallbacks": [-1, 2],
           "rolesets": ["run.01", "run.02", "walk.01"], "core_roles": ["01", "012", "0"]}
    labels = ["run.01", "run.02", "go.01"]
    new = {"forms": ["ran", "went"], "candidates": [[1], [2]], "fallbacks": [-1, -1],
           "rolesets": labels, "core_roles": ["01", "012", "01"]}
    merged = merged_lexicon(old, new, labels)
    assert merged == {
        "forms": ["ran", "walked", "went"], "candidates": [[0, 1], [], [2]], "fallbacks": [-1, 3, -1],
        "rolesets": labels + ["walk.01"], "core_roles": ["01", "012", "01", "0"]}
    assert merged_lexicon(None, new, labels) is new
    assert run_lexicon(new, labels, SimpleNamespace(sense_lexicon=old), tmp_path) == merged  # at step 0
    with zipfile.ZipFile(tmp_path / "model.keras", "w") as archive:
        archive.writestr("config.json", json.dumps({"config": {"sense_lexicon": merged}}))
    assert run_lexicon(new, labels, None, tmp_path) == merged  # resumed from a checkpoint
