"""Training curves: loss and dev F1 by step, read from a run's ``metrics.jsonl``."""

from __future__ import annotations

import json
import os
import pathlib

from data_pipeline.errors import DataFormatError
from lisa_tf.util.atomic_files import partial_file


def read_metrics(path: str | os.PathLike) -> list[dict]:
    """The evaluation records of a run (one JSON object per line), one per step (a later record of
    the same step wins); empty if none yet. A last line cut short by a killed write is ignored."""
    path = pathlib.Path(path)
    if not path.exists():
        return []
    lines = [line for line in path.read_text().splitlines() if line.strip()]
    by_step: dict[int, dict] = {}
    for number, line in enumerate(lines, 1):
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            if number == len(lines):
                break
            raise DataFormatError(path, number, "expected one JSON evaluation record per line") from None
        by_step[record["step"]] = record
    return [by_step[step] for step in sorted(by_step)]


def training_seconds(records: list[dict]) -> float:
    """Seconds of training over every session of a run, from its records (:func:`read_metrics`).

    A record's ``seconds`` count from the start of the session that wrote it; its ``run_seconds`` are the
    run's training time when it was written, over all its sessions (a resumed session continues from its
    checkpoint's records). Records written by lisa_tf before 2026-11-27 have no ``run_seconds``: there a
    drop in ``seconds`` marks a new session, and each session adds its last record's."""
    total, last = 0.0, 0.0
    for record in records:
        if "run_seconds" in record:
            total, last = record["run_seconds"], 0.0
            continue
        if record["seconds"] < last:
            total += last
        last = record["seconds"]
    return total + last


def plot_curves(records: list[dict], png: str | os.PathLike, title: str = "") -> None:
    """Two panels, training loss and dev SRL F1 against the step; written as PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = [r["step"] for r in records]
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.5))
    left.plot(steps, [r.get("loss", float("nan")) for r in records], marker="o")
    left.set_xlabel("step")
    left.set_ylabel("training loss")
    right.plot(steps, [r.get("dev_f1", float("nan")) for r in records], marker="o", color="tab:green")
    right.set_xlabel("step")
    right.set_ylabel("dev SRL F1")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    with partial_file(png) as partial:  # whole or not at all
        fig.savefig(partial, dpi=100, format="png")
    plt.close(fig)
