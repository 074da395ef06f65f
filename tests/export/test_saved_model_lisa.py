"""LISA export: the three signatures, and ``with_parse`` equals ``evaluate --parse`` (in-process
prediction with the same parse injected) on the same real sentences."""

import pathlib
import subprocess
import sys

import pytest
import tensorflow as tf

from data_pipeline.spans import bio_to_spans
from lisa_tf.predict import predict_sentences
from data_pipeline.splits import read_split
from lisa_tf.runs import load_run, load_run_config


def _padded(sentences):
    width = max(len(s) for s in sentences)
    tokens = [list(s.words) + [""] * (width - len(s)) for s in sentences]
    heads = [list(s.heads) + [-1] * (width - len(s)) for s in sentences]
    return tf.constant(tokens), tf.constant(heads, tf.int32)


def _spans_by_predicate(out, b, n):
    result = {}
    for p, position in enumerate(out["predicate_positions"][b]):
        if position >= 0:
            tags = [t.decode() for t in out["srl_tags"][b, p, :n]]
            result[int(position)] = [s for s in bio_to_spans(tags) if s.label not in ("V", "C-V")]
    return result


def test_signatures(lisa_export):
    _, export = lisa_export
    cli = pathlib.Path(sys.executable).with_name("saved_model_cli")
    shown = subprocess.run([str(cli), "show", "--all", "--dir", str(export)], capture_output=True, text=True, check=True).stdout
    for fragment in ("signature_def['serving_default']", "signature_def['with_parse']", "signature_def['sentences']",
                     "signature_def['text']", "outputs['argument_roles']", "outputs['argument_starts']",
                     "inputs['parse_heads']", "outputs['heads']", "outputs['pos']", "outputs['dep_labels']",
                     "outputs['predicate_flags']", "outputs['predicate_positions']", "outputs['srl_tags']"):
        assert fragment in shown, fragment


@pytest.mark.parametrize("inject", [True, False])
def test_export_equals_in_process_prediction(lisa_export, inject):
    run, export = lisa_export
    config = load_run_config(run)
    sentences = read_split(config.data.train, config.data.format, config.data.parse_train, 20)
    expected = predict_sentences(load_run(run), sentences, inject_parse=inject, gold_predicates=False)
    loaded = tf.saved_model.load(str(export))
    tokens, heads = _padded(sentences)
    if inject:
        out = loaded.signatures["with_parse"](tokens=tokens, parse_heads=heads)
    else:
        out = loaded.signatures["serving_default"](tokens=tokens)
    out = {k: v.numpy() for k, v in out.items()}
    for b, (sentence, predicted) in enumerate(zip(sentences, expected)):
        n = len(sentence)
        got = _spans_by_predicate(out, b, n)
        want = {p.position: [s for s in p.arguments if s.label not in ("V", "C-V")] for p in predicted.predicates}
        assert got == want, b
        assert [t.decode() for t in out["pos"][b, :n]] == predicted.pos
        assert list(out["heads"][b, :n]) == predicted.heads
        if inject:
            assert list(out["heads"][b, :n]) == sentence.heads  # the injected parse is the parse


def test_text_signature_answers_in_the_predictors_spans(lisa_export):
    """Raw sentences through the export's ``text`` signature (in-graph tokeniser and BIO → spans) give
    the tokens, offsets and argument spans of ``lisa_tf.load(run).predict`` on the same sentences."""
    import lisa_tf

    run, export = lisa_export
    config = load_run_config(run)
    texts = [" ".join(s.words) for s in read_split(config.data.train, config.data.format, None, 12)]
    texts += ["The cat sat on the mat.", "Mr. Smith didn't agree with them, did he?"]
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
            roles = out["argument_roles"][b, p]
            got[int(position)] = [
                (r.decode(), int(out["argument_token_starts"][b, p, k]), int(out["argument_token_ends"][b, p, k]),
                 int(out["argument_starts"][b, p, k]), int(out["argument_ends"][b, p, k]),
                 round(float(out["argument_scores"][b, p, k]), 3))
                for k, r in enumerate(roles) if r
            ]
        want = {p["token"]: [(a["role"], a["token_start"], a["token_end"], a["start"], a["end"], round(a["score"], 3))
                             for a in p["arguments"]] for p in result["predicates"]}
        assert got.keys() == want.keys()
        for position in want:
            assert [g[:5] for g in got[position]] == [w[:5] for w in want[position]]
            assert [g[5] for g in got[position]] == pytest.approx([w[5] for w in want[position]], abs=2e-3)
            checked += len(want[position])
    assert checked > 10, "the tiny run should label arguments, or this test shows nothing"


def test_parse_heads_outside_the_sentence_are_refused(lisa_export):
    _, export = lisa_export
    with_parse = tf.saved_model.load(str(export)).signatures["with_parse"]
    tokens = tf.constant([["A", "cat", "sat", "."]])
    ok = with_parse(tokens=tokens, parse_heads=tf.constant([[2, 3, 0, 3]], tf.int32))
    assert ok["heads"].numpy().tolist() == [[2, 3, 0, 3]]
    for heads in ([2, 9, 0, 3], [2, -5, 0, 3]):
        with pytest.raises(tf.errors.InvalidArgumentError, match="parse_heads: expected CoNLL-U heads in 0..length"):
            with_parse(tokens=tokens, parse_heads=tf.constant([heads], tf.int32))

