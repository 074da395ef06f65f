"""``--predicates verbal`` / ``predict(predicates="verbal")``: verb frames only, no nominal predicates
and no auxiliaries (data_pipeline.predicate_kinds)."""

from __future__ import annotations

import pytest

from data_pipeline.predicate_kinds import is_verbal, verbal_only
from data_pipeline.splits import read_split
from tests.conftest import ROOT


def _frame(words, pos, deprels=None, predicates=()):
    tokens = [{"text": w, "pos": p, **({"deprel": d} if deprels else {})}
              for w, p, d in zip(words, pos, deprels or [None] * len(words))]
    return {"tokens": tokens, "predicates": [{"token": t, "arguments": args} for t, args in predicates]}


def test_a_verb_frame_is_a_verb_tag_not_attached_as_an_auxiliary():
    words = ["I", "had", "been", "told", "of", "the", "meeting"]
    pos = ["PRP", "VBD", "VBN", "VBN", "IN", "DT", "NN"]
    deprels = ["nsubj:pass", "aux", "aux:pass", "root", "case", "det", "obl"]
    frame = _frame(words, pos, deprels, [(1, []), (2, []), (3, [{"role": "ARG1"}]), (6, [])])
    assert [p["token"] for p in verbal_only([frame])[0]["predicates"]] == [3]
    # "had" as a main verb is verbal
    assert is_verbal(_frame(["I", "had", "cake"], ["PRP", "VBD", "NN"], ["nsubj", "root", "obj"]), {"token": 1, "arguments": []})
    # without dependency labels (SA): an auxiliary form without arguments is not a verb frame; with arguments it is
    plain = _frame(["I", "had", "cake"], ["PRP", "VBD", "NN"])
    assert not is_verbal(plain, {"token": 1, "arguments": []})
    assert is_verbal(plain, {"token": 1, "arguments": [{"role": "ARG1"}]})


def test_the_shipped_models_verb_frames_are_uds_verbs():
    """On 300 EWT dev sentences, the verbal frames of the shipped model are a subset of all its frames
    and are (almost all) tokens UD tags VERB, while all its frames include nouns and auxiliaries."""
    import lisa_tf
    from data_pipeline.readers.conllu import read_conllu

    gold = read_conllu(ROOT / "data" / "propbank-ewt" / "dev.conllu.gz")[:300]
    predictor = lisa_tf.load()
    every = predictor.predict(tokens=[s.words for s in gold])
    verbal = predictor.predict(tokens=[s.words for s in gold], predicates="verbal")
    upos = lambda frames: [g.upos[p["token"]] for g, f in zip(gold, frames) for p in f["predicates"]]  # noqa: E731
    for a, v in zip(every, verbal):
        assert {p["token"] for p in v["predicates"]} <= {p["token"] for p in a["predicates"]}
        assert [p for p in a["predicates"] if p["token"] in {q["token"] for q in v["predicates"]}] == v["predicates"]
    tags, all_tags = upos(verbal), upos(every)
    # the rest are the model's POS mistakes (the GloVe model tags 94% of them right)
    assert len(tags) > 300 and tags.count("VERB") / len(tags) > 0.9, sorted(set(tags))
    assert tags.count("AUX") < all_tags.count("AUX") / 4 and tags.count("NOUN") < all_tags.count("NOUN") / 4
    assert all_tags.count("VERB") / len(all_tags) < 0.85


def test_frames_without_pos_are_refused_whether_or_not_they_have_predicates():
    """The refusal depends on the model (no POS tags), never on whether it found a predicate in this text."""
    untagged = {"tokens": [{"text": w} for w in ("The", "cat", "sat", ".")], "predicates": []}
    with pytest.raises(ValueError, match="predicts no POS tags"):
        verbal_only([untagged])
    with pytest.raises(ValueError, match="predicts no POS tags"):
        verbal_only([dict(untagged, predicates=[{"token": 2, "arguments": []}])])
    assert verbal_only([{"tokens": [], "predicates": []}]) == [{"tokens": [], "predicates": []}]  # an empty line


def test_a_model_without_pos_cannot_tell_verbs(deepatt_run):
    import lisa_tf
    from lisa_tf.labelling.predictor import PredictionInputError

    with pytest.raises(PredictionInputError, match="predicts no POS tags"):
        lisa_tf.load(deepatt_run).predict(tokens=[["The", "cat", "sat", "on", "the", "mat", "."]] * 4,
                                          predicates="verbal")
    with pytest.raises(PredictionInputError, match="expected one of all, verbal"):
        lisa_tf.load(deepatt_run).predict("The cat sat.", predicates="verbs")


def test_predict_verbal_on_the_command_line(capsys):
    from lisa_tf_cli.main import main

    text = "I had been told that the meeting was cancelled."
    assert main(["predict", "--predicates", "verbal", "--format", "jsonl", text]) == 0
    import json

    frame = json.loads(capsys.readouterr().out)
    shown = [p["text"] for p in frame["predicates"]]
    assert "had" not in shown and "been" not in shown and "told" in shown


def test_the_export_flags_the_frames_predict_keeps(lisa_export):
    """The export's ``predicate_verbal`` (computed in-graph, for REST and gRPC clients) marks exactly the
    frames ``predicates="verbal"`` keeps, through the token and the text signatures."""
    import numpy as np
    import tensorflow as tf

    import lisa_tf

    run, export = lisa_export
    gold = read_split(str(ROOT / "data" / "propbank-ewt" / "dev.gold_conll.gz"), "conll12", None, 30)
    rows = [list(s.words) for s in gold if len(s) <= 36]  # the tiny run's longest training sentence
    predictor = lisa_tf.load(run)
    kept = [{p["token"] for p in f["predicates"]} for f in predictor.predict(tokens=rows, predicates="verbal")]
    every = [{p["token"] for p in f["predicates"]} for f in predictor.predict(tokens=rows)]
    assert any(kept) and any(e - k for e, k in zip(every, kept))  # both kinds occur: the flags are tested
    loaded = tf.saved_model.load(str(export))
    width = max(map(len, rows))
    out = loaded.signatures["serving_default"](tokens=tf.constant([r + [""] * (width - len(r)) for r in rows]))
    positions, flags = out["predicate_positions"].numpy(), out["predicate_verbal"].numpy()
    assert ((flags == -1) == (positions == -1)).all()
    for s in range(len(rows)):
        assert {int(p) for p in positions[s] if p >= 0} == every[s]
        assert {int(p) for p, f in zip(positions[s], flags[s]) if f == 1} == kept[s]
    text = loaded.signatures["text"](text=tf.constant(["The dog barked at the mailman. He had been asleep."]))
    assert text["predicate_verbal"].shape == text["predicate_positions"].shape
    assert np.array_equal(text["predicate_verbal"].numpy() == -1, text["predicate_positions"].numpy() == -1)


def test_verbal_sentences_keep_the_same_tokens_predicates_on_both_sides():
    """Gold and predicted keep the predicates at the tokens the model's tags call verbal: its POS and
    labels decide, never the gold ones, and a gold predicate the model missed is judged by them too."""
    from data_pipeline.predicate_kinds import verbal_sentences
    from data_pipeline.sentence import Predicate, Sentence, Span

    words = ["I", "had", "been", "told", "of", "the", "meeting", "planned"]
    told = Predicate(3, "tell", None, (Span(0, 0, "ARG2"), Span(3, 3, "V")))
    gold = Sentence(words=words, pos=["PRP", "VBD", "VBN", "VBN", "IN", "DT", "NN", "NN"],
                    predicates=[Predicate(1, "have"), told, Predicate(6, "meet"), Predicate(7, "plan")])
    # the model: "planned" is a verb (a predicate it missed), "had" an auxiliary, "meeting" a noun
    predicted = Sentence(words=words, pos=["PRP", "VBD", "VBN", "VBN", "IN", "DT", "NN", "VBN"],
                         dep_labels=["nsubj:pass", "aux", "aux:pass", "root", "case", "det", "obl", "acl"],
                         predicates=[Predicate(1, "have"), told, Predicate(6, "meet")])
    (kept_gold,), (kept_predicted,) = verbal_sentences([gold], [predicted])
    assert [p.position for p in kept_gold.predicates] == [3, 7]
    assert [p.position for p in kept_predicted.predicates] == [3]
    assert kept_gold.words == words and kept_predicted.dep_labels == predicted.dep_labels
    with pytest.raises(ValueError, match="predicts no POS tags"):
        verbal_sentences([gold], [Sentence(words=words, predicates=[told])])


def test_evaluate_scores_verbal_predicates_as_predict_keeps_them(lisa_run, deepatt_run, capsys):
    """``evaluate --predicates verbal`` scores the verbal predicates only (srl-eval and predicate
    detection over the tokens the model's own POS and labels call verbs); DeepAtt, which predicts no
    POS tags, is refused with one line, as ``predict`` refuses it."""
    import dataclasses

    from data_pipeline.predicate_kinds import AUXILIARY_RELATIONS
    from lisa_tf.evaluation.parse_eval import predicate_detection
    from lisa_tf.evaluation.runs import evaluate_runs
    from lisa_tf.evaluation.srl_eval import score
    from lisa_tf_cli.main import main

    data = str(ROOT / "data" / "propbank-ewt" / "dev.gold_conll.gz")
    everything, gold, predicted = evaluate_runs([str(lisa_run)], data, limit=40, return_sentences=True)
    verbal = evaluate_runs([str(lisa_run)], data, limit=40, predicates="verbal")

    def verb_tokens(p):
        return {i for i, (tag, label) in enumerate(zip(p.pos, p.dep_labels))
                if tag.startswith("VB") and label not in AUXILIARY_RELATIONS}

    keep = [verb_tokens(p) for p in predicted]

    def only(sentences):
        return [dataclasses.replace(s, predicates=[q for q in s.predicates if q.position in k])
                for s, k in zip(sentences, keep)]

    assert verbal["predicates"] == "verbal" and "predicates" not in everything
    assert verbal["srl"] == score(only(gold), only(predicted)) != everything["srl"]
    assert verbal["srl_swap"] == score(only(gold), only(predicted), swap=True)
    # nominal predicates and auxiliaries are left out, verbs kept
    assert 0 < sum(len(s.predicates) for s in only(gold)) < sum(len(s.predicates) for s in gold)
    assert verbal["parsing"]["predicate_f1"] == predicate_detection(only(gold), only(predicted)).f1
    assert main(["evaluate", "--run", str(lisa_run), "--data", data, "--limit", "5", "--predicates", "verbal"]) == 0
    assert ", verbal predicates" in capsys.readouterr().out
    assert main(["evaluate", "--run", str(deepatt_run), "--data", data, "--limit", "5", "--predicates", "verbal"]) == 2
    assert capsys.readouterr().err.strip() == (f"error: --predicates verbal: {deepatt_run}: this model predicts no POS "
                                               "tags, which tell verbs (LISA and SA do); score all predicates")


def test_evaluate_verbal_scores_senses_on_the_verbal_predicates_only(lisa_run):
    """The sense figures of ``evaluate --predicates verbal`` are over the same predicates as its SRL
    scores (the kept gold and predicted sentences), not over all predicates."""
    from data_pipeline.predicate_kinds import verbal_sentences
    from lisa_tf.evaluation.runs import evaluate_runs
    from lisa_tf.evaluation.senses import sense_scores

    data = str(ROOT / "data" / "propbank-ewt" / "dev.gold_conll.gz")
    everything, gold, predicted = evaluate_runs([str(lisa_run)], data, limit=40, return_sentences=True)
    verbal = evaluate_runs([str(lisa_run)], data, limit=40, predicates="verbal")
    kept_gold, kept = verbal_sentences(gold, predicted)
    expected = sense_scores(kept_gold, kept)
    assert {k: verbal["senses"][k] for k in expected} == expected
    assert verbal["senses"]["gold_predicates"] == sum(len(s.predicates) for s in kept_gold) < \
        everything["senses"]["gold_predicates"]


def test_verbal_predicates_of_a_model_that_cannot_tell_verbs_are_refused_not_ignored(deepatt_run, tmp_path, capsys):
    """``predict --predicates verbal`` with a model without POS tags is one line and exit 2 before
    anything is labelled, even when the input has no sentence; ``evaluate`` refuses the dependency
    parser, whose scores it would otherwise print as if the flag were not given."""
    from lisa_tf_cli.main import main

    blank = tmp_path / "blank.txt"
    blank.write_text("\n\n")
    assert main(["predict", "--model", str(deepatt_run), "--input", str(blank), "--predicates", "verbal"]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"error: --predicates verbal: {deepatt_run}: this model predicts no POS tags, which tell verbs (LISA and SA "
        "do); label all predicates (--predicates all)")
    data = str(ROOT / "data" / "propbank-ewt" / "dev.conllu.gz")
    assert main(["evaluate", "--model", "parser", "--data", data, "--limit", "3", "--predicates", "verbal"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("error: --predicates verbal: ") and err[-1].endswith(
        "parser: a dependency parser, whose trees are scored without predicates; leave out --predicates")
