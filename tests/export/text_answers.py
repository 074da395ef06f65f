"""The check shared by every model kind's export: the ``text`` signature answers a paragraph in the
spans ``lisa_tf.load(run).predict(paragraph)`` gives, its sentences laid side by side, and, for a model
with a sense head, the senses and meanings it gives (its in-graph meaning tables against the frame
index the predictor reads)."""

from __future__ import annotations

import pytest
import tensorflow as tf

#: An argument's meanings in a predictor's dict, in the order of the text signature's outputs.
MEANINGS = ("description", "function_tag", "vn_role")


def expected_paragraph(results: list[dict]) -> dict:
    """The sentence results of ``predict(paragraph)`` in the ``text`` signature's layout: tokens numbered
    through the paragraph, each frame with its sentence."""
    tokens, heads, sentences, token_sentences, frames, senses = [], [], [], [], {}, {}
    for k, result in enumerate(results):
        first = len(tokens)
        if result["tokens"]:
            sentences.append((result["tokens"][0]["start"], result["tokens"][-1]["end"]))
        for token in result["tokens"]:
            tokens.append((token["text"], token["start"], token["end"]))
            heads.append(token["head"] + first if token.get("head") else token.get("head"))
            token_sentences.append(len(sentences) - 1)
        for p in result["predicates"]:
            frames[first + p["token"]] = (len(sentences) - 1, [
                (a["role"], first + a["token_start"], first + a["token_end"], a["start"], a["end"], round(a["score"], 3))
                for a in p["arguments"]])
            if "sense" in p:
                senses[first + p["token"]] = ((p["sense"] or "", p["sense_source"], p["sense_name"] or ""), [
                    tuple(a.get(key, "") for key in MEANINGS) for a in p["arguments"]])
    return {"tokens": tokens, "heads": heads, "sentences": sentences, "token_sentences": token_sentences,
            "frames": frames, "senses": senses}


def text_signature_agrees_with_predictor(run, export, texts) -> int:
    """Asserts that ``export``'s ``text`` signature gives, for each of ``texts`` (paragraphs), the
    sentences, tokens, character offsets, heads, predicates and argument spans (role, token span,
    character span; score within 2e-3) that ``lisa_tf.load(run).predict(text)`` gives; returns how many
    arguments were compared."""
    import lisa_tf

    out = tf.saved_model.load(str(export)).signatures["text"](text=tf.constant(texts))
    out = {k: v.numpy() for k, v in out.items()}
    predictor = lisa_tf.load(run)
    checked = 0
    for b, text in enumerate(texts):
        want = expected_paragraph(predictor.predict(text))
        n = len(want["tokens"])
        assert int(out["lengths"][b]) == n
        assert list(zip([t.decode() for t in out["tokens"][b, :n]], out["token_starts"][b, :n].tolist(),
                        out["token_ends"][b, :n].tolist())) == want["tokens"]
        assert (out["token_starts"][b, n:] == -1).all() and not out["tokens"][b, n:].any()
        s = len(want["sentences"])
        assert list(zip(out["sentence_starts"][b, :s].tolist(), out["sentence_ends"][b, :s].tolist())) == want["sentences"]
        assert (out["sentence_starts"][b, s:] == -1).all()
        assert out["token_sentences"][b, :n].tolist() == want["token_sentences"]
        if "heads" in out and want["heads"] and want["heads"][0] is not None:
            assert out["heads"][b, :n].tolist() == want["heads"]
        got, senses = {}, {}
        for p, position in enumerate(out["predicate_positions"][b]):
            if position < 0:
                continue
            if "senses" in out:
                senses[int(position)] = (
                    tuple(out[key][b, p].decode() for key in ("senses", "sense_sources", "sense_names")),
                    [tuple(out[key][b, p, k].decode() for key in ("argument_descriptions", "argument_function_tags",
                                                                  "argument_vn_roles"))
                     for k, r in enumerate(out["argument_roles"][b, p]) if r])
            assert out["predicate_flags"][b, position] == 1
            roles = out["argument_roles"][b, p]
            got[int(position)] = (int(out["predicate_sentences"][b, p]), [
                (r.decode(), int(out["argument_token_starts"][b, p, k]), int(out["argument_token_ends"][b, p, k]),
                 int(out["argument_starts"][b, p, k]), int(out["argument_ends"][b, p, k]),
                 round(float(out["argument_scores"][b, p, k]), 3))
                for k, r in enumerate(roles) if r
            ])
        assert got.keys() == want["frames"].keys(), b
        assert senses == want["senses"], b
        assert int(out["predicate_flags"][b].sum()) == len(got)
        for position, (sentence, arguments) in want["frames"].items():
            assert got[position][0] == sentence
            assert [g[:5] for g in got[position][1]] == [w[:5] for w in arguments]
            assert [g[5] for g in got[position][1]] == pytest.approx([w[5] for w in arguments], abs=2e-3)
            checked += len(arguments)
    return checked
