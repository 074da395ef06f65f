"""The Dozat & Manning parser on real EWT trees: it learns a slice, every output is a tree, the
``parse`` command writes CoNLL-U that the project's reader (and so LISA's ``--parse``) reads back."""

from __future__ import annotations

import json

import numpy as np
import pytest

from data_pipeline.readers.conllu import read_conllu
from lisa_tf.config import load_config
from lisa_tf.decoding.mst import is_tree
from lisa_tf.evaluation.parse_eval import parse_scores
from lisa_tf.labelling.parse import conllu_lines, parse_sentences
from lisa_tf.models.runs import load_run
from lisa_tf.training.loop import train
from lisa_tf_cli.main import main
from tests.models.conftest import EWT, parser_overrides

SENTENCES = 20


@pytest.fixture(scope="module")
def parser_run(tmp_path_factory):
    run = tmp_path_factory.mktemp("parser") / "run"
    config = load_config(None, parser_overrides())
    summary = train(config, run, verbose=0)
    return run, config, summary, load_run(run)


def test_learns_the_slice_and_outputs_trees(parser_run):
    run, config, summary, model = parser_run
    gold = read_conllu(config.data.train)[:SENTENCES]
    parsed = parse_sentences(model, gold)
    scores = parse_scores(gold, parsed)
    # An untrained parser scores about 20 UAS here; this one, after 100 steps on these sentences, 80 or so.
    assert scores["uas"] >= 70.0 and scores["las"] >= 60.0, scores
    assert summary["best_dev_f1"] == pytest.approx(scores["las"])
    assert all(is_tree(s.heads) for s in parsed)
    assert [s.words for s in parsed] == [s.words for s in gold]
    assert all(len(s.pos) == len(s) and len(s.dep_labels) == len(s) for s in parsed)
    # UPOS and XPOS are tagged side by side, each in its own tag set, and both are learnt
    assert set(model.upos_labels) == {t for s in gold for t in s.upos} and "PROPN" in model.upos_labels
    assert "NNP" in model.pos_labels and not set(model.upos_labels) & set(model.pos_labels) - {"X"}
    assert all(len(s.upos) == len(s) for s in parsed) and {t for s in parsed for t in s.upos} <= set(model.upos_labels)
    assert scores["upos"] >= 80.0 and scores["pos"] >= 80.0, scores
    records = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert {"dev_uas", "dev_las", "dev_pos", "dev_upos"} <= set(records[-1])


def test_trees_even_when_the_argmax_is_not(parser_run):
    model = parser_run[3]
    sentences = read_conllu(EWT / "dev.conllu.gz")[:40]  # unseen: the argmax heads of a tiny model often cycle
    greedy = parse_sentences(model, sentences, tree=False)
    trees = parse_sentences(model, sentences)
    assert not all(is_tree(s.heads) for s in greedy)
    assert all(is_tree(s.heads) for s in trees)


def test_parse_command_writes_conllu_lisa_reads(parser_run, tmp_path, capsys):
    run = parser_run[0]
    text = tmp_path / "in.txt"
    text.write_text("The cat sat on the mat. It was happy.\n\nDogs bark.\n")
    out = tmp_path / "out.conllu"
    assert main(["parse", str(run), "--input", str(text), "--out", str(out)]) == 0
    parsed = read_conllu(out)
    assert [s.words for s in parsed] == [["The", "cat", "sat", "on", "the", "mat", "."], ["It", "was", "happy", "."],
                                         ["Dogs", "bark", "."]]
    assert all(is_tree(s.heads) for s in parsed)
    assert parsed[2].upos[1] in model_upos(parser_run) and parsed[2].pos[1] in parser_run[3].pos_labels  # UPOS, XPOS columns
    assert "sentences/s" in capsys.readouterr().err
    # the words of a CoNLL file, and pre-tokenised lines
    gold = tmp_path / "gold.conllu"
    gold.write_text("\n".join(conllu_lines(read_conllu(EWT / "dev.conllu.gz")[:5])) + "\n")
    conllu = tmp_path / "words.conllu"
    assert main(["parse", str(run), "--input", str(gold), "--out", str(conllu)]) == 0
    assert [s.words for s in read_conllu(conllu)] == [s.words for s in read_conllu(gold)]
    tokens = tmp_path / "tokens.txt"
    tokens.write_text("can't stop\n")
    assert main(["parse", str(run), "--input", str(tokens), "--tokenized", "--out", str(out)]) == 0
    assert read_conllu(out)[0].words == ["can't", "stop"]


def model_upos(parser_run) -> set:
    return set(parser_run[3].upos_labels)


def test_parse_command_errors(parser_run, tmp_path, capsys):
    run = parser_run[0]
    assert main(["parse", str(run), "--input", str(tmp_path / "missing.txt")]) == 2
    assert main(["parse", str(tmp_path), "--input", "-"]) == 2
    err = capsys.readouterr().err
    assert "missing.txt: no such file" in err and "not a run directory" in err


def test_evaluate_command_scores_a_parser_run(parser_run, tmp_path, capsys):
    run, config = parser_run[0], parser_run[1]
    out = tmp_path / "metrics.json"
    assert main(["evaluate", "--run", str(run), "--data", config.data.train, "--limit", str(SENTENCES),
                 "--out", str(out)]) == 0
    metrics = json.loads(out.read_text())
    assert metrics["condition"] == "parser" and metrics["sentences"] == SENTENCES
    gold = read_conllu(config.data.train)[:SENTENCES]
    assert metrics["parsing"]["uas"] == pytest.approx(parse_scores(gold, parse_sentences(parser_run[3], gold))["uas"])
    assert "UAS" in capsys.readouterr().out


def test_self_attention_encoder_switch():
    from data_pipeline.dataset import make_dataset
    from data_pipeline.splits import read_split
    from data_pipeline.vocab import Vocabularies
    from lisa_tf.models import build_model

    config = load_config(None, parser_overrides(**{"model.parser_encoder": "attention", "model.num_layers": 2,
                                                   "model.hidden_size": 32, "model.num_heads": 4,
                                                   "model.filter_size": 64}))
    sentences = read_split(config.data.train, "conllu", None, 5)
    vocabs = Vocabularies.build(sentences)
    model = build_model(config.model, vocabs)
    batch = next(iter(make_dataset(sentences, vocabs, layout=model.layout, shuffle=False,
                                   preprocess=model.preprocessor)[0]))
    model.build_from_batch(batch)
    assert model.lstms is None and model.backbone is not None
    outputs = model(batch)
    length = int(batch["word_ids"].shape[1])
    assert outputs["arc_logits"].shape[1:] == (length, length)
    assert outputs["label_logits"].shape[-1] == len(vocabs.dep_labels)
    assert np.isfinite(float(model.compute_loss(batch, y_pred=outputs)))
    assert all(is_tree(s.heads) for s in parse_sentences(model, sentences))


def test_a_words_characters_do_not_depend_on_the_batch():
    """Padding characters (up to the batch's longest word) used to enter the convolution as the
    embedding of id 0, so a word's vector, and the parse, changed with the other sentences of a batch."""
    import tensorflow as tf

    from lisa_tf.models.parser import CharacterCNN

    characters = CharacterCNN(8, 6)
    alone = characters(tf.constant([["Dogs", "bark"]])).numpy()
    beside_longer = characters(tf.constant([["Dogs", "bark"], ["Extraordinarily", ""]])).numpy()
    np.testing.assert_allclose(beside_longer[:1], alone, rtol=1e-6, atol=1e-6)


def test_gold_tags_never_pass_through_a_parser_without_that_tagger():
    """Gold sentences carry UPOS and XPOS; a parser trained without UPOS (data without the column, or a
    model saved before it had a UPOS tagger) answers ``upos=None``, so UPOS accuracy is not scored
    against the gold tags copied through."""
    import dataclasses

    from data_pipeline.splits import read_split
    from data_pipeline.vocab import Vocabularies, Vocabulary
    from lisa_tf.models import build_model

    config = load_config(None, parser_overrides())
    sentences = read_split(config.data.train, "conllu", None, 5)
    assert all(s.upos is not None and s.pos is not None for s in sentences)
    vocabs = dataclasses.replace(Vocabularies.build(sentences), upos=Vocabulary("upos", []))
    model = build_model(config.model, vocabs)
    model.build_from_batch()
    assert model.upos_tagger is None and model.tagger is not None
    parsed = parse_sentences(model, sentences)
    assert all(s.upos is None and len(s.pos) == len(s) for s in parsed)
    assert "upos" not in parse_scores(sentences, parsed) and "pos" in parse_scores(sentences, parsed)


@pytest.mark.parametrize("encoder", ["bilstm", "attention"])
def test_word_dropout_reaches_the_parsers_word_embedding(encoder):
    """``model.word_dropout`` replaces real words by <unk> before the parser's word embedding in training
    (either encoder), so the <unk> row gets a gradient; at inference it is never read."""
    import keras
    import tensorflow as tf

    from data_pipeline.dataset import make_dataset
    from data_pipeline.splits import read_split
    from data_pipeline.vocab import OOV_ID, Vocabularies
    from lisa_tf.layers.word_dropout import WordDropout
    from lisa_tf.models import build_model

    keras.utils.set_random_seed(2)
    config = load_config(None, parser_overrides(**{"model.word_dropout": 0.3, "model.parser_encoder": encoder,
                                                   "model.num_layers": 1, "model.hidden_size": 32,
                                                   "model.num_heads": 4, "model.filter_size": 64}))
    sentences = read_split(config.data.train, "conllu", None, 5)
    vocabs = Vocabularies.build(sentences)
    model = build_model(config.model, vocabs)
    dataset = make_dataset(sentences, vocabs, layout=model.layout, shuffle=False, preprocess=model.preprocessor)[0]
    # the longest sentence, 36 tokens: all of them kept with probability 0.7^36 < 3e-6
    batch = max(dataset, key=lambda b: int(tf.size(b["word_ids"])))
    model.build_from_batch(batch)
    owner = model.backbone if encoder == "attention" else model
    embedding = model.backbone.words if encoder == "attention" else model.word_embedding
    assert type(owner.unknown_words) is WordDropout and owner.unknown_words.rate == 0.3
    assert not (batch["word_ids"].numpy() == OOV_ID).any()
    for training in (False, True):
        with tf.GradientTape() as tape:
            loss = model.compute_loss(batch, y_pred=model(batch, training=training))
        gradient = tf.convert_to_tensor(tape.gradient(loss, embedding.embeddings))
        assert (float(tf.norm(gradient[OOV_ID])) > 0) is training
