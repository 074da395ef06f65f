"""Evaluating one run under several conditions loads it once (lisa_tf.evaluation.runs._evaluated_run),
and again as soon as one of its files changes."""

import os
import shutil

import lisa_tf.evaluation.runs as evaluation
from lisa_tf.models.runs import load_run_config


def test_a_run_evaluated_again_loads_once_until_its_weights_change(lisa_run, tmp_path, monkeypatch):
    run = tmp_path / "run"
    shutil.copytree(lisa_run, run)
    dev = load_run_config(run).data.dev
    loads = []
    real = evaluation.load_run
    monkeypatch.setattr(evaluation, "load_run", lambda *args, **kwargs: loads.append(args) or real(*args, **kwargs))
    evaluation._cached_run.cache_clear()
    first = evaluation.evaluate_runs([str(run)], dev, limit=8)
    evaluation.evaluate_runs([str(run)], dev, limit=8, gold_predicates=True)
    again = evaluation.evaluate_runs([str(run)], dev, limit=8)
    assert len(loads) == 1
    assert again["srl"] == first["srl"]
    weights = run / "best" / "model.weights.h5"
    stat = weights.stat()
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))  # a newer file of the same name
    assert evaluation.evaluate_runs([str(run)], dev, limit=8)["srl"] == first["srl"]
    assert len(loads) == 2
    evaluation.evaluate_runs([str(run)], dev, limit=8, weights="final")  # other weights: another model
    assert len(loads) == 3
