"""Fixtures of the training tests."""

from __future__ import annotations

import functools

import pytest

from lisa_tf.config import ExperimentConfig, load_config
from lisa_tf.training import loop
from tests.models.conftest import tiny_overrides

_read_split = functools.lru_cache(maxsize=None)(loop.read_split)


@pytest.fixture
def read_once(monkeypatch):
    """Training reads each split once per process: for tests that run several sessions of a tiny run
    (reading EWT's training file for its first 20 sentences takes most of a tiny session's time)."""
    monkeypatch.setattr(loop, "read_split", _read_split)


def quick_config(steps: int, **extra) -> ExperimentConfig:
    """The tiny run (:func:`tests.models.conftest.tiny_overrides`) with one layer, and dropout (a
    resumed run must continue its masks as well), evaluated every step (each record's loss is
    that step's) on 2 dev sentences: a few seconds a session."""
    return load_config(None, tiny_overrides(**{
        "model.kind": "deepatt", "model.num_layers": 1, "model.predicate_identifier_layers": 0,
        "model.residual_dropout": 0.2, "model.attention_dropout": 0.2, "data.max_eval_sentences": 2,
        "train.max_steps": steps, "train.eval_every": 1, "train.keep_weights": 0, **extra}))
