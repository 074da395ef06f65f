"""Markdown result tables in the layouts of the papers.

* :func:`srl_table` — rows are models, column groups are splits (e.g. Dev / WSJ Test / Brown Test), each
  group P, R, F1 (DeepAtt Table 1, LISA Tables 1-3).
* :func:`parsing_table` — rows are models, columns POS, UAS, LAS (LISA Table 5).
* :func:`predicate_table` — predicate detection P, R, F1 per split (LISA Table 6).

Inputs are plain dicts: ``{model: {split: scores}}`` or ``{model: scores}``, where ``scores`` is a dict
(keys ``precision``/``recall``/``f1`` or ``P``/``R``/``F1``, ``pos``/``uas``/``las``, any case) or any
object with those attributes (e.g. :class:`~lisa_tf.evaluation.srl_eval.SrlEvalResult`). A missing score
prints as ``—``; a score given as ``None`` as ``n/a``: not applicable, what the model does not predict (POS
tags of a model that tags none) or the data cannot score (LAS of trees without labels, or with labels of
another scheme than the model's). Numbers are percentages printed with ``digits`` decimals.

Example::

    print(srl_table({"SA": {"WSJ Test": {"precision": 83.5, "recall": 83.9, "f1": 83.7}}}))
"""

from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

MISSING = "—"
#: A score that does not apply (given as ``None``): what a model does not predict or the data cannot score.
NOT_APPLICABLE = "n/a"

_ALIASES = {
    "precision": ("precision", "p", "prec"),
    "recall": ("recall", "r", "rec"),
    "f1": ("f1", "f"),
    "pos": ("pos", "pos_accuracy"),
    "uas": ("uas",),
    "las": ("las",),
}


def _value(scores: Any, metric: str) -> Optional[float | str]:
    """The metric from a dict (any key case, common aliases) or an object attribute; ``None`` if absent,
    :data:`NOT_APPLICABLE` if given as ``None``."""
    if scores is None:
        return None
    names = _ALIASES.get(metric, (metric,))
    if isinstance(scores, Mapping):
        lowered = {str(key).lower(): value for key, value in scores.items()}
        for name in names:
            if name in lowered:
                return NOT_APPLICABLE if lowered[name] is None else float(lowered[name])
        return None
    for name in names:
        if hasattr(scores, name):
            return float(getattr(scores, name))
    return None


def _cell(value: Optional[float | str], digits: int, bold: bool = False) -> str:
    if value is None:
        return MISSING
    if value == NOT_APPLICABLE:
        return value
    text = f"{value:.{digits}f}"
    return f"**{text}**" if bold else text


def _row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _render(header: Sequence[str], rows: Sequence[Sequence[str]], caption: Optional[str]) -> str:
    lines = []
    if caption:
        lines += [caption, ""]
    lines.append(_row(header))
    lines.append(_row(["---"] + ["---:"] * (len(header) - 1)))
    lines += [_row(row) for row in rows]
    return "\n".join(lines) + "\n"


def _ordered_splits(results: Mapping[str, Mapping[str, Any]], splits: Optional[Sequence[str]]) -> list[str]:
    if splits is not None:
        return list(splits)
    seen: list[str] = []
    for per_split in results.values():
        for split in per_split:
            if split not in seen:
                seen.append(split)
    return seen


def _grouped_table(results: Mapping[str, Mapping[str, Any]], splits: Optional[Sequence[str]],
                   metrics: Sequence[tuple[str, str]], caption: Optional[str], digits: int,
                   bold_best: bool, first_column: str) -> str:
    splits = _ordered_splits(results, splits)
    values = {
        model: {(split, key): _value(per_split.get(split), key) for split in splits for key, _ in metrics}
        for model, per_split in results.items()
    }
    best = {}
    if bold_best:
        for split in splits:
            for key, _ in metrics:
                present = [v[(split, key)] for v in values.values() if isinstance(v[(split, key)], float)]
                best[(split, key)] = max(present) if present else None
    header = [first_column] + [f"{split} {label}".strip() for split in splits for _, label in metrics]
    rows = []
    for model, row_values in values.items():
        cells = [model]
        for split in splits:
            for key, _ in metrics:
                value = row_values[(split, key)]
                is_best = bold_best and isinstance(value, float) and round(value, digits) == round(best[(split, key)], digits)
                cells.append(_cell(value, digits, is_best))
        rows.append(cells)
    return _render(header, rows, caption)


_PRF = (("precision", "P"), ("recall", "R"), ("f1", "F1"))


def srl_table(results: Mapping[str, Mapping[str, Any]], splits: Optional[Sequence[str]] = None, *,
              caption: Optional[str] = None, digits: int = 2, bold_best: bool = False) -> str:
    """SRL precision / recall / F1: one row per model, one P-R-F1 column group per split.

    Args:
        results: ``{model: {split: scores}}``.
        splits: column-group order (default: order of first appearance, e.g. Dev, WSJ Test, Brown Test).
        caption: a line printed above the table.
        bold_best: bold the best value of every column.
    """
    return _grouped_table(results, splits, _PRF, caption, digits, bold_best, "Model")


def predicate_table(results: Mapping[str, Mapping[str, Any]], splits: Optional[Sequence[str]] = None, *,
                    caption: Optional[str] = None, digits: int = 2, bold_best: bool = False) -> str:
    """Predicate detection precision / recall / F1 per split (LISA Table 6 layout)."""
    return _grouped_table(results, splits, _PRF, caption, digits, bold_best, "Model")


def parsing_table(results: Mapping[str, Any], *, caption: Optional[str] = None, digits: int = 2,
                  bold_best: bool = False) -> str:
    """POS accuracy, UAS and LAS: one row per model (LISA Table 5 layout), with a UPOS column first
    when some row has UPOS accuracy (a parser that tags both).

    Args:
        results: ``{model: scores}`` with ``pos``, ``uas``, ``las`` and optionally ``upos`` (e.g. from
            :func:`lisa_tf.evaluation.parse_eval.evaluate_parsing`).
    """
    wrapped = {model: {"": scores} for model, scores in results.items()}
    columns = (("pos", "POS"), ("uas", "UAS"), ("las", "LAS"))
    if any("upos" in scores for scores in results.values()):
        columns = (("upos", "UPOS"),) + columns
    return _grouped_table(wrapped, [""], columns, caption, digits, bold_best, "Model")


def per_role_table(per_role: Mapping[str, Mapping[str, Any]], top: Optional[int] = None) -> list[str]:
    """srl-eval's per-role scores (``{role: {correct, missed, precision, recall, f1, ...}}``) as Markdown
    table lines, most frequent gold role first; ``top``: only that many roles."""
    frequent = sorted(per_role.items(), key=lambda item: -(item[1]["correct"] + item[1]["missed"]))[:top]
    lines = ["| role | gold arguments | P | R | F1 |", "|---|---:|---:|---:|---:|"]
    return lines + [f"| {role} | {c['correct'] + c['missed']:,} | {_cell(c['precision'], 2)} | {_cell(c['recall'], 2)} | "
                    f"{_cell(c['f1'], 2)} |" for role, c in frequent]


def ablation_summary(rows: Sequence[Mapping[str, Any]]) -> list[dict]:
    """Per ablation run (``{"f1": {"step": F1}, ...}``, the baseline first): its ``best`` dev F1 and its
    ``delta`` from the baseline at ``delta_at``, the last step both reached (``None`` for the baseline, or
    with no step in common)."""
    baseline = rows[0]["f1"] if rows else {}
    summary = []
    for number, row in enumerate(rows):
        curve = row["f1"]
        shared = sorted((int(step) for step in curve if step in baseline), reverse=True)
        delta_at = shared[0] if shared and number else None
        summary.append({"best": max(curve.values()) if curve else None, "delta_at": delta_at,
                        "delta": None if delta_at is None else curve[str(delta_at)] - baseline[str(delta_at)]})
    return summary


def ablation_table(result: Mapping[str, Any]) -> list[str]:
    """Ablation runs at equal steps as Markdown table lines: one row per lever (what it changed, dev F1 at
    each evaluated step, its best, and its difference from the baseline at the last step both reached:
    :func:`ablation_summary`).

    ``result`` is what ``benchmarks/ablations.py`` writes: ``{"steps": [int], "rows": [{"name", "changes",
    "f1": {"step": F1}}]}``, the baseline first; a step a run has not reached prints as ``—``."""
    steps = result["steps"]
    lines = ["| lever | what changed | " + " | ".join(f"dev F1 @ {step:,}" for step in steps) + " | best | vs baseline |",
             "|---|---|" + "---:|" * (len(steps) + 2)]
    for row, summary in zip(result["rows"], ablation_summary(result["rows"])):
        cells = [_cell(row["f1"].get(str(step)), 2) for step in steps]
        delta = "" if summary["delta"] is None else f"{summary['delta']:+.2f} @ {summary['delta_at']:,}"
        lines.append(f"| {row['name']} | {row['changes']} | " + " | ".join(cells)
                     + f" | {_cell(summary['best'], 2)} | {delta} |")
    return lines
