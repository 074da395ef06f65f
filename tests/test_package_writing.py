"""Tests of what lisa_tf.packages.writing puts in a package's ``assets/``."""

from __future__ import annotations

import json

from lisa_tf.config import load_config
from lisa_tf.packages.finding import ROOT


def test_a_package_records_its_runs_config_with_project_relative_data_paths(lisa_run, tmp_path):
    from lisa_tf.models.runs import load_run
    from lisa_tf.packages.writing import _package

    run_config = json.loads((lisa_run / "config.json").read_text())
    assert run_config["data"]["train"].startswith(f"{ROOT}/data/")  # the run records absolute paths
    _package(load_run(lisa_run), lisa_run, tmp_path)
    recorded = json.loads((tmp_path / "assets" / "config.json").read_text())
    assert recorded["data"]["train"] == run_config["data"]["train"][len(f"{ROOT}/"):]
    assert recorded["data"]["train"].startswith("data/")
    # the rest of the config is the run's, and reading it back gives the run's paths
    assert {k: v for k, v in recorded.items() if k != "data"} == {k: v for k, v in run_config.items() if k != "data"}
    assert load_config(tmp_path / "assets" / "config.json").data.train == run_config["data"]["train"]
