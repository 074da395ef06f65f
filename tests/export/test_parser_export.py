"""The dependency parser's export: its three signatures give well-formed trees (Eisner, in-graph) that
equal the NumPy path's (``lisa_tf.labelling.parse``, Chu-Liu-Edmonds) wherever that tree is projective, with the
same labels and POS; the REST server serves it, and ``python -m lisa_tf parse`` reads it."""

from __future__ import annotations

import json
import urllib.request

import numpy as np
import pytest
import tensorflow as tf

from data_pipeline.readers.conllu import read_conllu
from data_pipeline.sentence import Sentence
from data_pipeline.tokenizer import tokenize
from lisa_tf.config import load_config
from lisa_tf.decoding.mst import is_tree
from lisa_tf.labelling.parse import parse_sentences
from lisa_tf.models.runs import load_run
from lisa_tf.training.loop import train
from lisa_tf_cli.main import main
from tests.decoding.test_eisner import is_projective
from tests.models.conftest import EWT, parser_overrides

TEXTS = ["The cat sat on the mat.", "Mr. Smith didn't agree with them, did he?", "Hello"]


@pytest.fixture(scope="module")
def parser_export(tmp_path_factory):
    """A parser run trained 25 steps on 20 EWT trees, the run loaded, and its export ``…/parser/1``
    (written by the ``export`` command)."""
    base = tmp_path_factory.mktemp("parser_export")
    config = load_config(None, parser_overrides(**{"train.max_steps": 25, "train.eval_every": 25}))
    train(config, base / "run", verbose=0)
    export = base / "parser" / "1"
    assert main(["export", "--run", str(base / "run"), "--out", str(export)]) == 0
    return load_run(base / "run"), export, tf.saved_model.load(str(export))


def _strings(row, n):
    return [value.decode() for value in row[:n]]


def _assert_like_numpy_path(model, out, sentences) -> int:
    """Every answer is a tree; it equals ``parse_sentences`` (heads, labels) wherever that tree is
    projective, and its POS and UPOS always. Returns how many sentences had a projective NumPy tree."""
    expected = parse_sentences(model, sentences)
    projective = 0
    for b, (sentence, want) in enumerate(zip(sentences, expected)):
        n = len(sentence)
        heads = [int(h) for h in out["heads"][b, :n]]
        assert out["lengths"][b] == n
        assert is_tree(heads), (b, heads)
        assert (out["heads"][b, n:] == -1).all() and not any(out["dep_labels"][b, n:]) and not any(out["pos"][b, n:])
        assert _strings(out["pos"][b], n) == want.pos and _strings(out["upos"][b], n) == want.upos
        if is_projective(want.heads):
            projective += 1
            assert heads == want.heads, b
            assert _strings(out["dep_labels"][b], n) == want.dep_labels, b
        else:
            assert all(label in model.dep_labels for label in _strings(out["dep_labels"][b], n))
    return projective


def test_token_signatures_equal_the_numpy_path_on_projective_trees(parser_export):
    model, _, loaded = parser_export
    assert set(loaded.signatures) == {"serving_default", "sentences", "text"}
    # Unseen sentences short enough that the tiny parser's best tree is mostly projective.
    sentences = [Sentence(words=s.words) for s in read_conllu(EWT / "dev.conllu.gz")[:300] if len(s) <= 12][:24]
    width = max(len(s) for s in sentences)
    tokens = tf.constant([list(s.words) + [""] * (width - len(s)) for s in sentences])
    out = {k: v.numpy() for k, v in loaded.signatures["serving_default"](tokens=tokens).items()}
    assert set(out) == {"heads", "dep_labels", "pos", "upos", "lengths"}
    assert out["heads"].dtype == np.int32 and out["heads"].shape == (len(sentences), width)
    assert _assert_like_numpy_path(model, out, sentences) >= 12
    split = loaded.signatures["sentences"](sentences=tf.constant([" ".join(s.words) for s in sentences]))
    assert (split["heads"].numpy() == out["heads"]).all()


def test_text_signature_tokenises_and_parses(parser_export):
    model, _, loaded = parser_export
    out = {k: v.numpy() for k, v in loaded.signatures["text"](text=tf.constant(TEXTS)).items()}
    assert set(out) == {"tokens", "token_starts", "token_ends", "heads", "dep_labels", "pos", "upos", "lengths",
                        "sentence_starts", "sentence_ends", "token_sentences"}
    sentences = []
    for b, text in enumerate(TEXTS):
        tokens = tokenize(text)
        n = len(tokens)
        assert _strings(out["tokens"][b], n) == [t.text for t in tokens]
        assert out["token_starts"][b, :n].tolist() == [t.start for t in tokens]
        assert out["token_ends"][b, :n].tolist() == [t.end for t in tokens]
        assert (out["token_starts"][b, n:] == -1).all()
        sentences.append(Sentence(words=[t.text for t in tokens]))
    _assert_like_numpy_path(model, out, sentences)
    for name in ("serving_default", "text"):  # core TensorFlow only: no Python, no TF Text ops
        graph = loaded.signatures[name].graph.as_graph_def()
        ops = {n.op for n in graph.node} | {n.op for f in graph.library.function for n in f.node_def}
        assert all(hasattr(tf.raw_ops, op) for op in ops) and not ops & {"PyFunc", "EagerPyFunc", "PyFuncStateless"}


def test_text_signature_parses_each_sentence_of_a_paragraph_alone(parser_export):
    """A paragraph's sentences are split in-graph and parsed one by one: the answer equals the
    sentences' own answers laid side by side (tokens and heads numbered through the paragraph)."""
    _, _, loaded = parser_export
    paragraph = "The cat sat on the mat. Mr. Smith didn't agree with them, did he?\n\nHello"
    out = {k: v.numpy() for k, v in loaded.signatures["text"](text=tf.constant([paragraph])).items()}
    alone = {k: v.numpy() for k, v in loaded.signatures["text"](text=tf.constant(TEXTS)).items()}
    assert out["sentence_starts"][0].tolist() == [0, 24, 67] and out["sentence_ends"][0].tolist() == [23, 65, 72]
    first, heads = 0, []
    for b, start in enumerate((0, 24, 67)):
        n = int(alone["lengths"][b])
        assert _strings(out["tokens"][0, first:first + n], n) == _strings(alone["tokens"][b], n)
        assert (out["token_starts"][0, first:first + n] == alone["token_starts"][b, :n] + start).all()
        assert (out["token_sentences"][0, first:first + n] == b).all()
        assert out["dep_labels"][0, first:first + n].tolist() == alone["dep_labels"][b, :n].tolist()
        heads += [h + first if h else 0 for h in alone["heads"][b, :n].tolist()]
        first += n
    assert int(out["lengths"][0]) == first and out["heads"][0].tolist() == heads


def test_served_over_rest(parser_export):
    from export import rest_server

    _, export, loaded = parser_export
    server = rest_server.make_server("parser", export.parent, port=0, warn=lambda m: None)
    server.start_in_thread()
    try:
        words = ["The", "cat", "sat", "on", "the", "mat", "."]
        body = json.dumps({"instances": [{"tokens": words}]}).encode()
        request = urllib.request.Request(f"{server.url}/v1/models/parser:predict", data=body)
        with urllib.request.urlopen(request, timeout=60) as response:
            assert response.status == 200
            prediction = json.loads(response.read())["predictions"][0]
    finally:
        server.stop()
    direct = loaded.signatures["serving_default"](tokens=tf.constant([words]))
    assert prediction["heads"] == direct["heads"].numpy()[0].tolist()
    assert is_tree(prediction["heads"]) and prediction["lengths"] == len(words)
    assert prediction["dep_labels"] == _strings(direct["dep_labels"].numpy()[0], len(words))


def test_parse_command_reads_the_export(parser_export, tmp_path):
    """``python -m lisa_tf parse EXPORT`` writes the export's trees as CoNLL-U, in small calls too."""
    _, export, loaded = parser_export
    words = [["The", "cat", "sat", "on", "the", "mat", "."], ["Hello"], ["Dogs", "bark", "at", "night", "."]]
    (tmp_path / "tokens.txt").write_text("".join(" ".join(w) + "\n" for w in words))
    out = tmp_path / "parsed.conllu"
    # 10 tokens a call: the first sentence alone, the other two padded together.
    assert main(["parse", str(export), "--input", str(tmp_path / "tokens.txt"), "--tokenized",
                 "--batch-tokens", "10", "--out", str(out)]) == 0
    parsed = read_conllu(out)
    assert [s.words for s in parsed] == words
    for sentence in parsed:
        direct = loaded.signatures["serving_default"](tokens=tf.constant([list(sentence.words)]))
        assert sentence.heads == direct["heads"].numpy()[0].tolist()
        assert sentence.dep_labels == _strings(direct["dep_labels"].numpy()[0], len(sentence))
        assert sentence.pos == _strings(direct["pos"].numpy()[0], len(sentence))


def test_parse_command_refuses_other_exports_and_greedy(parser_export, tiny_model_base, tmp_path, capsys):
    _, export, _ = parser_export
    (tmp_path / "tokens.txt").write_text("Dogs bark .\n")
    assert main(["parse", str(tiny_model_base / "1"), "--input", str(tmp_path / "tokens.txt"), "--tokenized"]) != 0
    assert "not a dependency parser's export" in capsys.readouterr().err
    assert main(["parse", str(export), "--input", str(tmp_path / "tokens.txt"), "--tokenized", "--greedy"]) != 0
    assert "--greedy" in capsys.readouterr().err


def test_predict_names_the_parse_command(parser_export):
    """``lisa_tf.load`` (``predict``) labels semantic roles: a parser run or export is refused by name."""
    import lisa_tf
    from lisa_tf.labelling.predictor import ParserModelError

    _, export, _ = parser_export
    for path in (export, export.parent.parent / "run"):
        with pytest.raises(ParserModelError, match=r"a dependency parser .*`python -m lisa_tf parse "):
            lisa_tf.load(path)
