"""Figures of the experiments: training curves, F1 by sentence length, syntax-head heat map (PNG)."""

from __future__ import annotations

import os
from typing import Mapping, Sequence

import numpy as np

from data_pipeline.sentence import Sentence

from lisa_tf.decoding.head_indices import to_self_loop
from lisa_tf.evaluation.srl_eval import evaluate

LENGTH_BINS = ((0, 10), (11, 20), (21, 30), (31, 40), (41, 1000))


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def f1_by_length(gold: Sequence[Sentence], predicted: Sequence[Sentence], bins=LENGTH_BINS) -> dict[str, float]:
    """SRL F1 of the sentences in each length bin (LISA's appendix figure); bins without
    sentences are left out."""
    result = {}
    for low, high in bins:
        chosen = [i for i, s in enumerate(gold) if low <= len(s) <= high]
        if chosen:
            scored = evaluate([gold[i] for i in chosen], [predicted[i] for i in chosen], warn=lambda m: None)
            result[f"{low}-{high}" if high < 1000 else f"{low}+"] = scored.f1
    return result


def plot_curves_grid(curves: Mapping[str, list[dict]], png: str | os.PathLike) -> None:
    """Dev F1 and training loss by step for several runs, one line each."""
    plt = _pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
    for name, records in curves.items():
        steps = [r["step"] for r in records]
        left.plot(steps, [r["loss"] for r in records], marker=".", label=name)
        right.plot(steps, [r["dev_f1"] for r in records], marker=".", label=name)
    left.set(xlabel="step", ylabel="training loss")
    right.set(xlabel="step", ylabel="dev SRL F1")
    right.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(png, dpi=100)
    plt.close(fig)


def plot_f1_by_length(series: Mapping[str, Mapping[str, float]], png: str | os.PathLike) -> None:
    """One line per system: F1 against sentence-length bin."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 3.8))
    for name, values in series.items():
        ax.plot(list(values), list(values.values()), marker="o", label=name)
    ax.set(xlabel="sentence length (tokens)", ylabel="SRL F1")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(png, dpi=100)
    plt.close(fig)


def plot_attention_heatmap(attention: np.ndarray, words: Sequence[str], gold_heads: Sequence[int],
                           png: str | os.PathLike, title: str = "") -> None:
    """The syntax head's attention (rows: dependents, columns: heads) with the gold heads marked.

    ``gold_heads`` are 1-based (0 = root, drawn on the diagonal as LISA's self-loop).
    """
    plt = _pyplot()
    n = len(words)
    fig, ax = plt.subplots(figsize=(0.45 * n + 2, 0.45 * n + 1.5))
    ax.imshow(attention[:n, :n], cmap="Blues", vmin=0.0, vmax=1.0)
    for i, j in enumerate(np.asarray(to_self_loop(np.asarray(gold_heads[:n], np.int32)))):
        ax.add_patch(plt.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="red", linewidth=1.5))
    ax.set_xticks(range(n), words, rotation=90, fontsize=8)
    ax.set_yticks(range(n), words, fontsize=8)
    ax.set(xlabel="head", ylabel="dependent", title=title or "syntax head attention (red: gold head)")
    fig.tight_layout()
    fig.savefig(png, dpi=100)
    plt.close(fig)
