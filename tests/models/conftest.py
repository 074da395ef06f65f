"""Tiny configurations on real shipped data (PropBank-EWT) for model tests."""

from __future__ import annotations

import pytest

from tests.conftest import DATA

EWT = DATA / "propbank-ewt"


def tiny_overrides(**extra) -> list[str]:
    """Overrides for a 2-layer, 64-wide model trained on the first 20 EWT training sentences and
    evaluated on the same sentences (an overfit check)."""
    base = {
        "data.format": "conll12",
        "data.train": str(EWT / "train.gold_conll.gz"),
        "data.dev": str(EWT / "train.gold_conll.gz"),
        "data.parse_train": str(EWT / "train.conllu.gz"),
        "data.parse_dev": str(EWT / "train.conllu.gz"),
        "data.max_train_sentences": "20",
        "data.max_eval_sentences": "20",
        "model.embedding_size": "32",
        "model.hidden_size": "64",
        "model.num_heads": "4",
        "model.filter_size": "128",
        "model.num_layers": "2",
        "model.residual_dropout": "0.0",
        "model.attention_dropout": "0.0",
        "model.relu_dropout": "0.0",
        "model.label_smoothing": "0.0",
        "train.optimizer": "nadam",
        "train.schedule": "noam",
        "train.learning_rate": "0.05",
        "train.warmup_steps": "30",
        "train.epsilon": "1e-9",
        "train.batch_tokens": "1024",
        "train.mixed_precision": "float32",
        "train.strategy": "default",
    }
    base.update({k: str(v) for k, v in extra.items()})
    return [f"{k}={v}" for k, v in base.items()]


@pytest.fixture
def tiny():
    return tiny_overrides


def parser_overrides(sentences: int = 20, **extra) -> list[str]:
    """Overrides for a one-layer BiLSTM parser (with characters) trained on the first ``sentences`` EWT
    training trees and evaluated on the same trees."""
    base = {
        "data.format": "conllu",
        "data.train": str(EWT / "train.conllu.gz"),
        "data.dev": str(EWT / "train.conllu.gz"),
        "data.max_train_sentences": sentences,
        "data.max_eval_sentences": sentences,
        "model.kind": "parser",
        "model.embedding_size": 32,
        "model.lstm_layers": 1,
        "model.lstm_size": 48,
        "model.char_embedding_size": 16,
        "model.parse_mlp_size": 48,
        "model.dep_label_mlp_size": 24,
        "model.parser_dropout": 0.0,
        "model.predicate_identifier_layers": 0,
        "train.optimizer": "nadam",
        "train.learning_rate": 0.02,
        "train.beta_2": 0.9,
        "train.batch_tokens": 1024,
        "train.max_steps": 100,
        "train.eval_every": 100,
        "train.mixed_precision": "float32",
        "train.strategy": "default",
    }
    base.update(extra)
    return [f"{k}={v}" for k, v in base.items()]
