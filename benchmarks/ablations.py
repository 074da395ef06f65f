"""The fine-tuning ablations of the shipped ``srl`` recipe: dev F1 of each lever at equal steps.

Each lever is one training run from ``configs/open/lisa_finetune.toml`` that changes one thing (a
``key=value`` override, or a config), run with the same budget in steps (``train.max_steps=2500``) and
the same dev slice (the config's first 600 dev sentences, evaluated every 500 steps), resumed across
sessions with the same command. This script reads what the runs wrote (``metrics.jsonl``: dev F1 by
step; ``config.json``: what the run changed against the baseline), so the table is re-made from the runs
themselves whenever one has gone further. Steps a run has not reached yet are ``—``.

Prints a Markdown table (one row per run: what changed, dev F1 at each evaluated step, the best, and the
difference from the baseline at the last step both reached), plots the dev curves
(``benchmarks/out/ablations.png``) and writes ``benchmarks/out/ablations.json``.

Run: ``PYTHONPATH=. python benchmarks/ablations.py BASELINE_RUN [NAME=RUN ...]``, e.g.
``python benchmarks/ablations.py runs/abl_baseline "word dropout 0.1=runs/abl_wd10"``; each run trained by
``python -m lisa_tf train --config configs/open/lisa_finetune.toml --out RUN train.max_steps=2500 KEY=VALUE``.
"""

from __future__ import annotations

import argparse
import json
import pathlib

from lisa_tf.evaluation.tables import ablation_summary, ablation_table
from lisa_tf.training.curves import read_metrics

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _flatten(config: dict, prefix: str = "") -> dict:
    """``{"section.key": value}``; the shipped data's paths from ``data/`` on (a run records them absolute,
    under the checkout it was started in)."""
    flat = {}
    for key, value in config.items():
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{prefix}{key}."))
        elif isinstance(value, str) and value.startswith("/") and "/data/" in value:
            flat[f"{prefix}{key}"] = "data/" + value.rpartition("/data/")[2]
        else:
            flat[f"{prefix}{key}"] = value
    return flat


#: Run controls that differ between sessions without changing what is trained.
_RUN_CONTROLS = {"train.max_minutes", "train.max_steps"}


def _run_config(run: pathlib.Path) -> dict:
    """``run``'s config, flattened, with this code's defaults for the keys it was written without (a
    setting added after the run started reads as the default it was trained with)."""
    import dataclasses

    from lisa_tf.config import config_from_dict

    return _flatten(dataclasses.asdict(config_from_dict(json.loads((run / "config.json").read_text()))))


def changes(run: pathlib.Path, baseline: pathlib.Path) -> str:
    """What ``run``'s config sets differently from ``baseline``'s (``key=value``, run controls left out)."""
    mine, base = _run_config(run), _run_config(baseline)
    found = [f"{key}={mine.get(key)}" for key in sorted(set(mine) | set(base))
             if key not in _RUN_CONTROLS and mine.get(key) != base.get(key)]
    return ", ".join(found) or "(the shipped recipe)"


def table(runs: dict[str, pathlib.Path]) -> dict:
    """``{"steps": [...], "rows": [{name, run, changes, f1: {step: F1}, best, delta, delta_at}]}`` of the runs,
    the first the baseline (best and delta: :func:`~lisa_tf.evaluation.tables.ablation_summary`)."""
    names = list(runs)
    baseline = runs[names[0]]
    rows = [{"name": name, "run": str(path), "changes": changes(path, baseline),
             "f1": {str(r["step"]): r["dev_f1"] for r in read_metrics(path / "metrics.jsonl") if "dev_f1" in r}}
            for name, path in runs.items()]
    steps = sorted({int(step) for row in rows for step in row["f1"]})
    for row in rows:
        row["f1"] = {str(step): row["f1"][str(step)] for step in steps if str(step) in row["f1"]}
    return {"steps": steps, "rows": [row | summary for row, summary in zip(rows, ablation_summary(rows))]}


def markdown(result: dict) -> str:
    return "\n".join(ablation_table(result))


def plot(result: dict, path: pathlib.Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(7, 4.5))
    for row in result["rows"]:
        points = sorted((int(s), f1) for s, f1 in row["f1"].items())
        if points:
            axis.plot(*zip(*points), marker="o", label=row["name"])
    axis.set_xlabel("training step")
    axis.set_ylabel("dev F1 (first 600 sentences)")
    axis.set_title("srl fine-tuning ablations")
    axis.grid(alpha=0.3)
    axis.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("baseline", help="the baseline run directory (the shipped recipe)")
    parser.add_argument("levers", nargs="*", metavar="NAME=RUN", help="a lever's name and its run directory")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "out" / "ablations.json"))
    args = parser.parse_args(argv)
    runs = {"baseline": pathlib.Path(args.baseline)}
    for item in args.levers:
        name, sep, run = item.rpartition("=")
        if not sep or not name:
            parser.error(f"{item!r}: expected NAME=RUN")
        runs[name] = pathlib.Path(run)
    for name, run in runs.items():
        if not (run / "config.json").is_file():
            parser.error(f"{name}: {run}/config.json: no such file; expected a run directory")
    result = table(runs)
    print(markdown(result))
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    plot(result, out.with_suffix(".png"))
    print(f"wrote {out} and {out.with_suffix('.png')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
