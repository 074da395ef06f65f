"""The check shared by every model kind's export: the ``text`` signature answers in the spans of
``lisa_tf.load(run).predict`` on the same raw sentences."""

from __future__ import annotations

import pytest
import tensorflow as tf


def text_signature_agrees_with_predictor(run, export, texts) -> int:
    """Asserts that ``export``'s ``text`` signature gives, for each of ``texts``, the tokens, character
    offsets, predicates and argument spans (role, token span, character span; score within 2e-3) that
    ``lisa_tf.load(run).predict(texts)`` gives; returns how many arguments were compared."""
    import lisa_tf

    out = tf.saved_model.load(str(export)).signatures["text"](text=tf.constant(texts))
    out = {k: v.numpy() for k, v in out.items()}
    expected = lisa_tf.load(run).predict(texts)
    checked = 0
    for b, result in enumerate(expected):
        n = len(result["tokens"])
        assert [t.decode() for t in out["tokens"][b, :n]] == [t["text"] for t in result["tokens"]]
        assert out["token_starts"][b, :n].tolist() == [t["start"] for t in result["tokens"]]
        assert out["token_ends"][b, :n].tolist() == [t["end"] for t in result["tokens"]]
        got = {}
        for p, position in enumerate(out["predicate_positions"][b]):
            if position < 0:
                continue
            assert out["predicate_flags"][b, position] == 1
            roles = out["argument_roles"][b, p]
            got[int(position)] = [
                (r.decode(), int(out["argument_token_starts"][b, p, k]), int(out["argument_token_ends"][b, p, k]),
                 int(out["argument_starts"][b, p, k]), int(out["argument_ends"][b, p, k]),
                 round(float(out["argument_scores"][b, p, k]), 3))
                for k, r in enumerate(roles) if r
            ]
        want = {p["token"]: [(a["role"], a["token_start"], a["token_end"], a["start"], a["end"], round(a["score"], 3))
                             for a in p["arguments"]] for p in result["predicates"]}
        assert got.keys() == want.keys(), b
        assert int(out["predicate_flags"][b].sum()) == len(want)
        for position in want:
            assert [g[:5] for g in got[position]] == [w[:5] for w in want[position]]
            assert [g[5] for g in got[position]] == pytest.approx([w[5] for w in want[position]], abs=2e-3)
            checked += len(want[position])
    return checked
