"""DeepAtt end to end on real sentences: it can learn, and decoding/scoring are wired right."""

import json

import pytest

from lisa_tf.config import load_config
from lisa_tf.training.loop import train
from lisa_tf.evaluation.runs import evaluate_runs


@pytest.mark.parametrize("sublayer, decode", [("ffn", "viterbi")])
def test_overfits_twenty_real_sentences(tmp_path, tiny, sublayer, decode):
    config = load_config(None, tiny(**{
        "model.kind": "deepatt", "model.sublayer": sublayer, "model.decode": decode,
        "train.max_steps": 500, "train.eval_every": 250,
    }))
    summary = train(config, tmp_path / "run", verbose=0)
    assert summary["best_dev_f1"] >= 95.0, summary
    # the run directory holds what the issue promises
    for name in ("config.json", "vocab/srl.txt", "metrics.jsonl", "curves.png", "best/model.weights.h5", "final.weights.h5"):
        assert (tmp_path / "run" / name).exists(), name
    records = [json.loads(l) for l in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records] == [250, 500]
    # evaluate reloads the best weights and scores the same sentences the same way
    # (the dev F1 of training is scored with the gold predicates)
    metrics = evaluate_runs([str(tmp_path / "run")], config.data.train, limit=20, gold_predicates=True)
    assert abs(metrics["srl"]["f1"] - summary["best_dev_f1"]) < 1e-6
    assert metrics["srl_swap"]["f1"] == pytest.approx(metrics["srl"]["f1"])  # gold predicates: conventions agree
