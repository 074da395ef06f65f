"""How often labelled frames break PropBank's frame constraints (what
:mod:`lisa_tf.decoding.frame_viterbi` rules out): a core role (``ARG0`` … ``ARG5``, ``ARGA``; ``ARG1-DSP``
counts as ``ARG1``) given twice to one predicate, a continuation ``C-ARGk`` or a reference ``R-ARGk``
before (or without) its ``ARGk``, and a core role the predicate's roleset does not have in a frame index.
Gold PropBank-EWT data breaks none of the first three."""

from __future__ import annotations

import re
from collections import Counter
from typing import Optional, Sequence

_CORE = re.compile(r"^(?:(C|R)-)?ARG([0-5A])(?:-[A-Z]+)?$")


def frame_violations(sentences: Sequence, frame_index=None) -> dict:
    """Counts over the predicates of ``sentences`` (:class:`~data_pipeline.sentence.Sentence`):
    ``predicates``, ``repeated_core_role``, ``continuation_before_role``, ``reference_before_role`` (each a
    number of predicates), and with ``frame_index`` ``role_outside_roleset`` (predicates whose roleset is
    in the index and that have a core role it lacks)."""
    counts = Counter(predicates=0, repeated_core_role=0, continuation_before_role=0, reference_before_role=0)
    if frame_index is not None:
        counts["role_outside_roleset"] = 0
    for sentence in sentences:
        for predicate in sentence.predicates:
            counts["predicates"] += 1
            seen: list[str] = []
            broken: set[str] = set()
            for span in sorted(predicate.arguments, key=lambda s: s.start):
                match = _CORE.match(span.label)
                if not match:
                    continue
                kind, role = match.groups()
                if kind is None:
                    if role in seen:
                        broken.add("repeated_core_role")
                    seen.append(role)
                elif role not in seen:
                    broken.add("continuation_before_role" if kind == "C" else "reference_before_role")
            roleset = frame_index.roleset(predicate.sense) if frame_index is not None and predicate.sense else None
            if roleset is not None and set(seen) - {r.number for r in roleset.roles}:
                broken.add("role_outside_roleset")
            counts.update(broken)
    return dict(counts)


def frame_checks_table(checks: dict, name: Optional[str] = None) -> str:
    """:func:`frame_violations` as a Markdown table."""
    rows = [("repeated core role", "repeated_core_role"), ("C-X before X", "continuation_before_role"),
            ("R-X before X", "reference_before_role"), ("core role outside the roleset", "role_outside_roleset")]
    lines = [f"Frame constraints{f' ({name})' if name else ''}: predicates that break each, of {checks['predicates']:,}",
             "", "| constraint | predicates |", "|---|---:|"]
    return "\n".join(lines + [f"| {label} | {checks[key]:,} |" for label, key in rows if key in checks])


__all__ = ["frame_checks_table", "frame_violations"]
