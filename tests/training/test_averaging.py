"""Checkpoint averaging (``average-checkpoints``) on tiny runs trained on real EWT sentences."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from lisa_tf.models.runs import RunError, load_run
from lisa_tf.training.averaging import average_weights, checkpoint_files
from tests.conftest import ROOT


def _weights(run, path):
    model = load_run(run, str(path))
    return [np.asarray(w, dtype=np.float64) for w in model.get_weights()]


def test_only_the_latest_checkpoints_are_kept(deepatt_pair):
    run = deepatt_pair[0]
    kept = sorted(p.name for p in (run / "weights").iterdir())
    assert kept == ["step-60.weights.h5", "step-90.weights.h5"]
    assert [p.name for p in checkpoint_files(run, 2)] == kept
    with pytest.raises(RunError, match="only 2 are kept"):
        checkpoint_files(run, 3)


def test_average_is_the_elementwise_mean(deepatt_pair, tmp_path):
    run = deepatt_pair[0]
    files = checkpoint_files(run, 2)
    first, second = (_weights(run, f) for f in files)
    assert any(not np.allclose(a, b) for a, b in zip(first, second)), "the two checkpoints should differ"
    average_weights(run, files, tmp_path / "avg.weights.h5")
    averaged = _weights(run, tmp_path / "avg.weights.h5")
    for a, b, m in zip(first, second, averaged):
        np.testing.assert_allclose(m, (a + b) / 2, rtol=1e-6, atol=1e-6)


def test_command_writes_weights_that_evaluate_reads(deepatt_pair, tmp_path):
    run = deepatt_pair[0]
    out = tmp_path / "avg.weights.h5"
    env_python = [sys.executable, "-W", "ignore", "-m", "lisa_tf"]
    done = subprocess.run(env_python + ["average-checkpoints", "--run", str(run), "--last", "2", "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "averaged 2 checkpoints" in done.stdout
    from lisa_tf.evaluation.runs import evaluate_runs
    from lisa_tf.models.runs import load_run_config

    data = load_run_config(run).data
    metrics = evaluate_runs([str(run)], data.dev, weights=str(out), limit=20)
    assert metrics["sentences"] == 20 and 0.0 <= metrics["srl"]["f1"] <= 100.0


def test_missing_weights_directory_is_explained(tmp_path):
    with pytest.raises(RunError, match="train.keep_weights"):
        checkpoint_files(tmp_path, 5)
