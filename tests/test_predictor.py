"""``lisa_tf.load(...).predict(...)`` and ``python -m lisa_tf predict`` on tiny runs trained on real EWT
sentences: frames agree with the scorer's path, offsets index the input, bad input is named."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from data_pipeline.sentence import Span
from data_pipeline.splits import read_split
from data_pipeline.tokenizer import tokenize
import lisa_tf
from lisa_tf.labelling.batches import predict_sentences
from lisa_tf.labelling.predictor import PredictionInputError, describe
from lisa_tf.models.runs import load_run, load_run_config
from tests.conftest import ROOT

# The first sentence is one the tiny runs are trained on (EWT train), so that they find its predicate
# whatever the run-to-run variation of a 200-step training; the second is new to them.
TEXT = "Guerrillas killed an engineer, Asi Ali, from Tikrit. Mr. Smith didn't agree with them."


def _spans(result):
    return {p["token"]: sorted((a["token_start"], a["token_end"] - 1, a["role"]) for a in p["arguments"])
            for p in result["predicates"]}


def _real(run, count=12):
    config = load_run_config(run)
    return read_split(config.data.train, config.data.format, config.data.parse_train or None, count)


def test_tokens_in_frames_out_equal_the_scorers_path(lisa_run):
    sentences = _real(lisa_run)
    predictor = lisa_tf.load(lisa_run)
    results = predictor.predict(tokens=[s.words for s in sentences])
    expected = predict_sentences(load_run(lisa_run), sentences, gold_predicates=False)
    assert len(results) == len(sentences)
    labelled = 0
    for result, gold, want in zip(results, sentences, expected):
        assert [t["text"] for t in result["tokens"]] == gold.words
        assert _spans(result) == {p.position: sorted((a.start, a.end, a.label) for a in p.arguments
                                                    if a.label not in ("V", "C-V")) for p in want.predicates}
        assert [t["pos"] for t in result["tokens"]] == want.pos and [t["head"] for t in result["tokens"]] == want.heads
        labelled += sum(len(p["arguments"]) for p in result["predicates"])
    assert labelled > 20, "the tiny run should label arguments on its own training sentences"
    # the run's model.keras holds the best weights once training has finished: the same frames
    assert lisa_tf.load(lisa_run / "model.keras").predict(tokens=[s.words for s in sentences]) == results
    # the public switch to the plain BIO Viterbi: the scorer's path decoded without the frame constraints
    plain = predict_sentences(load_run(lisa_run), sentences, gold_predicates=False, constraints=False)
    unconstrained = lisa_tf.load(lisa_run, constraints=False)
    assert unconstrained.constraints is False and lisa_tf.load(lisa_run).constraints is True
    assert [_spans(r) for r in unconstrained.predict(tokens=[s.words for s in sentences])] == [
        {p.position: sorted((a.start, a.end, a.label) for a in p.arguments if a.label not in ("V", "C-V"))
         for p in want.predicates} for want in plain]


def test_raw_text_offsets_index_the_input(lisa_run):
    results = lisa_tf.load(lisa_run).predict(TEXT)
    assert len(results) == 2
    json.dumps(results)  # plain data
    assert [t["text"] for t in results[1]["tokens"]][:4] == ["Mr.", "Smith", "did", "n't"]
    for result in results:
        assert TEXT[result["tokens"][0]["start"]:result["tokens"][-1]["end"]] == result["text"]
        for token in result["tokens"]:
            assert TEXT[token["start"]:token["end"]] == token["text"]
        for predicate in result["predicates"]:
            assert TEXT[predicate["start"]:predicate["end"]] == predicate["text"]
            assert f"[V: {predicate['text']}]" in predicate["description"]
            for argument in predicate["arguments"]:
                assert TEXT[argument["start"]:argument["end"]] == argument["text"]
                meaning = f" {argument['description']}" if "description" in argument else ""
                assert f"[{argument['role']}{meaning}: " in predicate["description"]
                assert 0.0 < argument["score"] <= 1.0


def test_description_keeps_the_predicate_when_an_argument_covers_it():
    tokens = tokenize("The company said it expects growth.")
    said = [t.text for t in tokens].index("said")
    apart = describe(tokens, said, [Span(0, 1, "ARG0"), Span(3, 5, "ARG1")])
    assert apart == "[ARG0: The company] [V: said] [ARG1: it expects growth] ."
    # an argument tagged over its own predicate (a model's mistake) keeps the predicate visible
    covering = describe(tokens, said, [Span(0, 4, "ARG1")])
    assert covering == "[ARG1: The company [V: said] it expects] growth ."
    shown = describe(tokens, said, [Span(0, 1, "ARG0"), Span(3, 5, "ARG1")], {Span(0, 1, "ARG0"): "ARG0 sayer"})
    assert shown == "[ARG0 sayer: The company] [V: said] [ARG1: it expects growth] ."


def _senses(results):
    """Each predicate's sense fields and its arguments' meanings (all but the spans and scores)."""
    return [[({k: p[k] for k in ("sense", "sense_source", "sense_name")},
              [{k: a[k] for k in ("description", "function_tag", "vn_role") if k in a} for a in p["arguments"]])
             for p in r["predicates"]] for r in results]


def test_given_predicates_and_parse_are_checked(lisa_run, deepatt_run):
    predictor = lisa_tf.load(lisa_run)
    with pytest.raises(PredictionInputError, match=r"predicates\[0\]\[0\]: expected a token index in 0\.\.3 .* found 9"):
        predictor.predict(tokens=[["A", "cat", "sat", "."]], predicates=[[9]])
    with pytest.raises(PredictionInputError, match=r"parse\[0\]\[1\]: expected a CoNLL-U head in 0\.\.4"):
        predictor.predict(tokens=[["A", "cat", "sat", "."]], parse=[[2, -1, 0, 3]])
    only = predictor.predict(tokens=[["A", "cat", "sat", "."]], predicates=[[2]])
    assert [p["token"] for p in only[0]["predicates"]] == [2]
    deepatt = lisa_tf.load(deepatt_run)
    with pytest.raises(PredictionInputError, match=r"predicates\[0\]\[0\]: expected a token index in 0\.\.3 .* found 4"):
        deepatt.predict(tokens=[["A", "cat", "sat", "."]], predicates=[[4]])
    (result,) = deepatt.predict(tokens=[_real(deepatt_run, 1)[0].words], predicates=[[1]])
    assert [p["token"] for p in result["predicates"]] == [1]


def test_export_predictor_answers_like_the_model(lisa_export):
    run, export = lisa_export
    sentences = [s.words for s in _real(run)]
    from_model = lisa_tf.load(run).predict(tokens=sentences)
    from_export = lisa_tf.load(export.parent).predict(tokens=sentences)  # base directory: latest version
    assert [_spans(r) for r in from_export] == [_spans(r) for r in from_model]
    # the export's senses (its senses/sense_sources outputs) give the dicts the Keras model's give
    assert _senses(from_export) == _senses(from_model)
    assert sum(p["sense_name"] is not None for r in from_model for p in r["predicates"]) > 5
    assert sum("description" in a for r in from_model for p in r["predicates"] for a in p["arguments"]) > 10
    for a, b in zip(from_export, from_model):
        scores = [x["score"] for p in a["predicates"] for x in p["arguments"]]
        assert scores == pytest.approx([x["score"] for p in b["predicates"] for x in p["arguments"]], abs=1e-3)


def test_load_labels_a_package_through_its_built_export_and_reads_its_model_on_demand(lisa_run, tmp_path, monkeypatch):
    """``load(PACKAGE)`` labels through the package's cached export once one is built (it builds none itself):
    an :class:`ExportPredictor` with the Keras model's frames, its ``constraints``, and its ``model`` read
    from the package's ``.keras`` file when asked for; ``prefer_export=False`` and ``constraints=False``
    give the ``.keras`` model; the spaCy component loads it as ``load`` does. An export given by its path has
    no Keras model to read, and says so."""
    import numpy as np
    import spacy

    from export.cache_build import build_export
    from lisa_tf.labelling.predictor import ExportPredictor, NoKerasModelError, Predictor, load
    from lisa_tf.packages.export_cache import cached_export
    from tests.test_export_cache import _make_package

    monkeypatch.setenv("LISA_TF_CACHE", str(tmp_path / "cache"))
    package = _make_package(lisa_run, tmp_path / "models" / "tiny")
    assert type(load(package)) is Predictor and cached_export(package) is None  # no export yet, and none built
    base = build_export(package, report=lambda line: None)
    through_export, keras = load(package), load(package, prefer_export=False)
    assert type(through_export) is ExportPredictor and type(keras) is Predictor
    assert through_export.path == str(base / "1") and through_export.constraints is keras.constraints is True
    assert through_export.predict(TEXT) == keras.predict(TEXT)
    assert through_export.check_predicates("verbal") == "verbal" and through_export.frames is None
    assert "model" not in vars(through_export)  # labelling never reads the Keras model
    model = through_export.model
    assert type(model) is type(keras.model) and model.get_config() == keras.model.get_config()
    assert all(np.array_equal(a, b) for a, b in zip(model.get_weights(), keras.model.get_weights()))
    assert through_export.model is model  # read once
    plain = load(package, constraints=False)
    assert type(plain) is Predictor and plain.constraints is False
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("lisa_srl", config={"model": str(package)})
    assert type(nlp.get_pipe("lisa_srl").predictor) is ExportPredictor
    with pytest.raises(NoKerasModelError, match=re.escape(f"{base / '1'}: a SavedModel export, which holds no Keras "
                                                          f"model, and no model.keras beside it ({base / 'model.keras'})")):
        load(base).model


def test_export_predictor_batches_answer_like_the_model_with_given_predicates_and_parses(lisa_export, deepatt_run,
                                                                                        tmp_path):
    """Sentences of different lengths run together in padded batches (a small budget makes several):
    each row's answer is cut back to its own sentence, for given predicates (DeepAtt) and a given
    parse (LISA's with_parse) alike."""
    from export.saved_model import export_run

    run, export = lisa_export
    real = _real(run)
    sentences, heads = [s.words for s in real], [list(s.heads) for s in real]
    from_model = lisa_tf.load(run).predict(tokens=sentences, parse=heads)
    from_export = lisa_tf.load(export, token_budget=64).predict(tokens=sentences, parse=heads)
    assert [_spans(r) for r in from_export] == [_spans(r) for r in from_model]
    assert [[t["head"] for t in r["tokens"]] for r in from_export] == [[t["head"] for t in r["tokens"]] for r in from_model]
    given = [[i for i in range(len(words)) if i % 3 == 0] for words in sentences]  # predicates given by index
    deepatt_export = export_run(deepatt_run, tmp_path / "srl" / "1")
    from_model = lisa_tf.load(deepatt_run).predict(tokens=sentences, predicates=given)
    from_export = lisa_tf.load(deepatt_export, token_budget=64).predict(tokens=sentences, predicates=given)
    assert [_spans(r) for r in from_export] == [_spans(r) for r in from_model]
    assert [sorted(_spans(r)) for r in from_export] == given
    assert _senses(from_export) == _senses(from_model)  # one sense per (sentence, predicate) row: senses [B]


def test_predict_command(lisa_run, tmp_path, capsys):
    """``python -m lisa_tf predict`` in a process of its own once; every output format through the
    command's ``main`` in this process (the same code path after the interpreter starts)."""
    from lisa_tf_cli.main import main

    done = subprocess.run([sys.executable, "-W", "ignore", "-m", "lisa_tf", "predict", str(lisa_run), TEXT,
                           "--format", "jsonl"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [record.pop("line") for record in lines] == [1, 1]  # both sentences of TEXT argument 1
    predictor = lisa_tf.load(lisa_run)
    assert lines == predictor.predict(TEXT)
    assert "labelled 2 sentences" in done.stderr

    def predict(*args):
        capsys.readouterr()
        code = main(["predict", str(lisa_run), *args])
        return code, *capsys.readouterr()

    # a file of paragraphs: labelled in shared batches, the same frames as one paragraph at a time; each
    # record names its input line, and a blank line is an empty record (the output stays aligned)
    (tmp_path / "paragraphs.txt").write_text(TEXT + "\n\nShe gave her brother a book. It was new.\n")
    code, out, err = predict("--input", str(tmp_path / "paragraphs.txt"), "--format", "jsonl")
    assert code == 0, err[-2000:]
    records = [json.loads(line) for line in out.splitlines()]
    assert [record.pop("line") for record in records] == [1, 1, 2, 3, 3]
    assert records == (predictor.predict(TEXT) + [{"text": "", "tokens": [], "predicates": []}]
                       + predictor.predict("She gave her brother a book. It was new."))
    assert "5 sentences" in err and "1 empty" in err
    (tmp_path / "in.txt").write_text("The cat sat on the mat .\n\nIt was happy .\n")
    props = tmp_path / "out.props"
    code, out, err = predict("--input", str(tmp_path / "in.txt"), "--tokenized", "--format", "conll05", "--out", str(props))
    assert code == 0, err[-2000:]
    blocks = props.read_text().strip().split("\n\n")
    assert [len(b.splitlines()) for b in blocks] == [7, 4]  # one line per token, blank lines skipped
    # the words column, then the target column and one column per predicate: CoNLL-2005's pasted
    # layout, which the project's reader takes back with the frames
    from data_pipeline.readers.conll05 import read_conll05

    expected = predictor.predict(tokens=[["The", "cat", "sat", "on", "the", "mat", "."], ["It", "was", "happy", "."]])
    assert [(s.words, {p.position: sorted((a.start, a.end, a.label) for a in p.arguments if a.label != "V")
                       for p in s.predicates}) for s in read_conll05(props)] == [
        ([t["text"] for t in r["tokens"]], _spans(r)) for r in expected]
    parsed = tmp_path / "out.conllu"
    code, out, err = predict(TEXT, "--format", "conllu", "--out", str(parsed))
    assert code == 0, err[-2000:]
    from data_pipeline.readers.conllu import read_conllu

    read = read_conllu(parsed)  # the project's reader takes the predicted tags, heads and labels back
    assert [(s.words, s.pos, s.heads, s.dep_labels) for s in read] == [
        ([t["text"] for t in r["tokens"]], [t["pos"] for t in r["tokens"]], [t["head"] for t in r["tokens"]],
         [t["deprel"] for t in r["tokens"]]) for r in lines]
    assert all(label in predictor.model.dep_labels for s in read for label in s.dep_labels)
    conll12 = tmp_path / "out.gold_conll"
    code, out, err = predict(TEXT, "--format", "conll12", "--out", str(conll12))
    assert code == 0, err[-2000:]
    from data_pipeline.readers.conll12 import read_conll12

    read = read_conll12(conll12)  # the project's reader takes the predicted frames back
    assert [(s.words, s.pos, {p.position: sorted((a.start, a.end, a.label) for a in p.arguments if a.label != "V")
                              for p in s.predicates}) for s in read] == [
        ([t["text"] for t in r["tokens"]], [t["pos"] for t in r["tokens"]], _spans(r)) for r in lines]
    assert sum(len(s.predicates) for s in read) > 0
    # the frameset column holds the sense number of the predicted roleset (kill.01: lemma kill, frameset 01);
    # a predicate the model gives no roleset is written with its word and "?" (read back as "smith.?")
    assert [[p.roleset for p in s.predicates] for s in read] == [
        [p["sense"] or r["tokens"][p["token"]]["text"].lower() + ".?" for p in r["predicates"]] for r in lines]
    killed = next(line.split() for line in conll12.read_text().splitlines() if " killed " in line)
    assert killed[6:8] == ["kill", "01"]
    code, out, err = predict("--input", str(tmp_path / "missing.txt"))
    assert code == 2 and err.strip().splitlines()[-1].startswith("error:")
    assert "missing.txt" in err


def test_options_may_follow_the_model_and_come_between_texts(lisa_run, capsys):
    """``predict MODEL --format jsonl TEXT`` (options after the model path) labels TEXT with MODEL."""
    from lisa_tf_cli.main import main

    assert main(["predict", str(lisa_run), "--format", "jsonl", "The cat sat on the mat.", "--batch-tokens", "512",
                 "It was happy."]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["line"], r["text"]) for r in records] == [(1, "The cat sat on the mat."), (2, "It was happy.")]
    with pytest.raises(SystemExit) as exit_:  # an unknown option is still an error
        main(["predict", str(lisa_run), "--format", "jsonl", "Hi.", "--no-such-flag"])
    assert exit_.value.code == 2 and "unrecognized arguments: --no-such-flag" in capsys.readouterr().err


def test_a_first_text_is_a_model_only_when_it_names_one(lisa_run, tmp_path, monkeypatch, capsys):
    """``and/or`` is text, not a model path; a path under a directory that exists is a model (a typo
    in it is reported, not labelled); a path that exists is the model."""
    from lisa_tf_cli.commands.predict import _split_model
    from lisa_tf_cli.main import main

    def split(*text):
        args = type("Args", (), {"model": None, "text": list(text)})()
        _split_model(args)
        return args.model, args.text

    monkeypatch.chdir(tmp_path)
    (tmp_path / "models").mkdir()
    assert split("and/or", "more") == (None, ["and/or", "more"])
    assert split("either/or") == (None, ["either/or"])
    assert split("models/srlx", "The cat sat.") == ("models/srlx", ["The cat sat."])
    assert split("model.keras", "The cat sat.") == ("model.keras", ["The cat sat."])
    assert split(str(lisa_run), "The cat sat.") == (str(lisa_run), ["The cat sat."])
    assert main(["predict", "models/srlx", "The cat sat."]) == 2
    assert "models/srlx: no such file or directory" in capsys.readouterr().err


def test_evaluate_takes_every_kind_of_model(lisa_run, lisa_export, tmp_path, capsys):
    """``evaluate --model`` scores a run, its .keras file (with --format: it records none) and its
    export alike, with the tables of ``evaluate --run``."""
    from lisa_tf_cli.main import main

    data = str(ROOT / "data" / "propbank-ewt" / "dev.gold_conll.gz")

    def evaluate(*given):
        assert main(["evaluate", *given, "--data", data, "--limit", "40", "--json"]) == 0
        out = capsys.readouterr().out
        return json.loads(out), out

    by_run, _ = evaluate("--run", str(lisa_run))
    assert main(["evaluate", "--run", str(lisa_run), "--data", data, "--limit", "40"]) == 0
    table = capsys.readouterr().out
    assert "| " in table and "Predicate detection" in table
    by_model, _ = evaluate("--model", str(lisa_run))
    assert by_model["srl"] == by_run["srl"] and by_model["parsing"] == by_run["parsing"]
    from lisa_tf.models.runs import load_run, save_model

    keras_file = save_model(load_run(lisa_run), tmp_path / "lisa.keras")  # the run's best weights
    assert main(["evaluate", "--model", str(keras_file), "--data", data, "--limit", "40"]) == 2
    assert "records no data format; give --format" in capsys.readouterr().err
    by_file, _ = evaluate("--model", str(keras_file), "--format", "conll12")
    assert by_file["srl"]["f1"] == pytest.approx(by_run["srl"]["f1"], abs=0.5)
    _, export = lisa_export
    by_export, _ = evaluate("--model", str(export))
    assert by_export["srl"]["f1"] == pytest.approx(by_run["srl"]["f1"], abs=0.5)
    assert by_export["parsing"]["predicate_f1"] == pytest.approx(by_run["parsing"]["predicate_f1"], abs=1.0)
    assert main(["evaluate", "--model", "no-such-model", "--data", data]) == 2
    assert "--model no-such-model: no such file or directory" in capsys.readouterr().err


def test_another_frame_index_is_merged_over_the_shipped_one(lisa_export, tmp_path):
    """``load(..., frames=PATH)``: the index given (PropBank 3.1's bark.xml only, which lacks kill.01) is
    merged over the shipped one, for a run and an export alike: kill.01 keeps the shipped meanings (the
    user's own rolesets and meanings: tests/test_own_frames.py)."""
    from data_pipeline.frame_index import FrameIndex
    from tests.conftest import FIXTURES

    run, export = lisa_export
    path = tmp_path / "frames.json.gz"
    FrameIndex.from_frame_files(FIXTURES / "propbank-frames" / "v3.1", {
        "repository": "https://github.com/propbank/propbank-frames", "commit": "v3.1", "licence": "CC BY-SA 4.0",
        "attribution": "PropBank frame files 3.1"}).save(path)
    text = "Guerrillas killed an engineer, Asi Ali, from Tikrit."
    [shipped] = [p for p in lisa_tf.load(run).predict(text)[0]["predicates"] if p["sense"] == "kill.01"]
    assert shipped["sense_name"] == "cause to die, murder"
    assert re.search(r"\[ARG\d [^:\[\]]+:", shipped["description"])  # meanings shown
    for model in (run, export):
        [other] = [p for p in lisa_tf.load(model, frames=path).predict(text)[0]["predicates"] if p["text"] == "killed"]
        assert other == shipped


def test_predictors_of_one_export_share_what_is_loaded_while_one_holds_it(lisa_export, tmp_path):
    """A spaCy pipeline with two ``lisa_srl`` pipes (docs/spacy.md), or a notebook cell run again, loaded
    the same export twice: twice the start-up and twice the weights. One loaded export serves both while
    either holds it, is freed when neither does, and a copy elsewhere is another export."""
    import gc
    import shutil
    import weakref

    _, export = lisa_export
    first, second = lisa_tf.load(export), lisa_tf.load(export)
    assert second.loaded is first.loaded
    tokens = [s.words for s in _real(lisa_export[0])][:3]
    assert second.predict(tokens=tokens) == first.predict(tokens=tokens)
    copy = tmp_path / "srl" / "1"
    shutil.copytree(export, copy)
    assert lisa_tf.load(copy).loaded is not first.loaded
    held = weakref.ref(first.loaded)
    del first, second
    gc.collect()
    assert held() is None


def test_an_export_predictor_calls_its_signatures_without_the_idle_graph_passes(lisa_export, tmp_path, monkeypatch):
    """Its signatures are optimised without the idle graph passes (lisa_tf.util.graph_passes),
    and the frames are those of the signatures called with the thread's own settings."""
    import contextlib
    import shutil

    from lisa_tf.labelling import predictor as predictor_module
    from tests.test_graph_passes import _idle_passes_off, _rewrite_options

    _, export = lisa_export
    tokens = [s.words for s in _real(lisa_export[0])][:4]
    own_settings = tmp_path / "srl" / "1"  # another export object: its functions are optimised anew
    shutil.copytree(export, own_settings)
    with monkeypatch.context() as patched:
        patched.setattr(predictor_module, "without_idle_passes", contextlib.nullcontext)
        plain = lisa_tf.load(own_settings).predict(tokens=tokens)
    predictor = lisa_tf.load(export)
    signature, seen = predictor.signature, []

    def spy(**inputs):
        seen.append(_idle_passes_off(_rewrite_options()))
        return signature(**inputs)

    predictor.signature = spy
    assert predictor.predict(tokens=tokens) == plain
    assert seen and all(seen)
