"""The models shipped in models/ (lisa_tf.packages): each file gives the figures of its model card, and
the commands that default to them (load(), predict, serve) use them."""

import io
import json
import pathlib
import urllib.request
from contextlib import redirect_stdout

import pytest

from data_pipeline.sentence import Predicate, Sentence, Span
from data_pipeline.splits import read_split

from lisa_tf.evaluation.srl_eval import score
from lisa_tf.models.runs import load_model_file
from lisa_tf.packages.finding import DEFAULT_PARSER, DEFAULT_SRL, KERAS_FILE, SHIPPED, read_card, shipped_names

from tests.conftest import ROOT, shipped_export


#: Every shipped SRL model (models/srl, models/srl-fast, ...): each is checked against its own card.
SRL_PACKAGES = [name for name in shipped_names() if read_card(SHIPPED / name)["kind"] == "srl"]


@pytest.fixture(scope="module")
def card():
    return read_card(DEFAULT_SRL)


@pytest.fixture(scope="module")
def default_predictor():
    """``load()`` without a path on the shipped model's ``.keras`` file (``prefer_export=False``: not its
    cached export, which the tests compare with it), loaded once."""
    from lisa_tf.labelling.predictor import Predictor, load

    predictor = load(prefer_export=False)
    assert type(predictor) is Predictor
    return predictor


def _dev_slice(card):
    check = card["check"]
    return read_split(str(ROOT / check["data"]), check["format"], None, check["sentences"])


def _frames_to_sentence(gold, frame):
    """The predicted frames of one sentence as a Sentence the scorer reads; a predicate's lemma is the
    gold one at its position (srl-eval's verb column is the gold file's, as in the CoNLL evaluations)."""
    lemmas = {p.position: p.lemma for p in gold.predicates}
    predicates = [Predicate(p["token"], lemmas.get(p["token"], p["text"].lower()), None, tuple(sorted(
        [Span(a["token_start"], a["token_end"] - 1, a["role"]) for a in p["arguments"]]
        + [Span(p["token"], p["token"], "V")]))) for p in frame["predicates"]]
    return Sentence(words=list(gold.words), predicates=predicates)


@pytest.mark.parametrize("name", SRL_PACKAGES)
def test_shipped_export_gives_the_cards_check_f1(name):
    """The SavedModel built from the package, run through its serving signature (not the Keras path the
    card was computed with), scores within 0.5 F1 of the card on the card's dev slice."""
    import lisa_tf

    card = read_card(SHIPPED / name)
    assert card["check"]["constraints"], "the export decodes with constraints: the card's check must too"
    dev_slice = _dev_slice(card)
    predictor = lisa_tf.load(shipped_export(name))
    frames = predictor.predict(tokens=[s.words for s in dev_slice])
    predicted = [_frames_to_sentence(s, f) for s, f in zip(dev_slice, frames)]
    f1 = score(dev_slice, predicted)["f1"]
    assert len(dev_slice) == card["check"]["sentences"] == 200
    assert abs(f1 - card["check"]["f1"]) <= 0.5, (f1, card["check"])


@pytest.mark.parametrize("name", SRL_PACKAGES)
def test_shipped_keras_file_gives_the_cards_check_f1(name, capsys):
    """``evaluate --model NAME`` (the package's .keras file) on the card's dev slice gives its check F1."""
    from lisa_tf_cli.main import main

    check = read_card(SHIPPED / name)["check"]
    decoding = [] if check.get("constraints", False) else ["--no-constraints"]  # as the card's check was decoded
    assert main(["evaluate", "--model", name, "--data", str(ROOT / check["data"]), "--limit", str(check["sentences"]),
                 *decoding, "--json"]) == 0
    metrics = json.loads(capsys.readouterr().out)
    assert metrics["sentences"] == check["sentences"] and abs(metrics["srl"]["f1"] - check["f1"]) <= 0.5
    for pair in (check, check.get("without_constraints", {})):
        if "f1_float32" in pair:  # 16-bit storage costs at most 0.1 F1 on the slice
            assert abs(pair["f1"] - pair["f1_float32"]) <= 0.1, check


@pytest.mark.parametrize("name", [n for n in shipped_names() if read_card(SHIPPED / n)["kind"] == "parser"])
def test_shipped_parser_gives_the_cards_check_scores(name, capsys):
    """``evaluate --model NAME`` on the parser card's dev slice gives its check UAS and LAS."""
    from lisa_tf_cli.main import main

    check = read_card(SHIPPED / name)["check"]
    assert main(["evaluate", "--model", name, "--data", str(ROOT / check["data"]), "--limit", str(check["sentences"]),
                 "--json"]) == 0
    parsing = json.loads(capsys.readouterr().out)["parsing"]
    assert abs(parsing["uas"] - check["uas"]) <= 0.5 and abs(parsing["las"] - check["las"]) <= 0.5
    if "las_float32" in check:
        assert abs(check["las"] - check["las_float32"]) <= 0.1, check


def test_card_figures_come_from_the_run(card):
    """The card's headline figures are the experiment's evaluations of the same model, and the training
    summary is the run's best evaluation."""
    evaluation = card["evaluation"]
    for split in ("dev", "test"):
        for condition in ("predicted", "gold_parse", "external_parse", "gold_predicates"):
            assert 0 < evaluation[f"{split}.{condition}"]["srl"]["f1"] < 100
    assert card["training"]["best_dev_f1"] > 0 and card["training"]["steps"] > 0
    text = (DEFAULT_SRL / "MODEL_CARD.md").read_text()
    assert f"{evaluation['test.predicted']['srl']['f1']:.2f}" in text
    assert "CC BY-SA 4.0" in text and "PDDL" in text
    for name in shipped_names():  # every model says under which licence its weights are given
        assert "**Licence.** The model's weights: CC BY-SA 4.0" in (SHIPPED / name / "MODEL_CARD.md").read_text(), name
    for name in SRL_PACKAGES:  # what a user can expect on their text: by genre, and on predicates never seen
        slices = read_card(SHIPPED / name)["slices"]
        assert list(slices["by_genre"]) == ["weblog", "newsgroup", "email", "reviews", "answers"], name
        assert sum(g["sentences"] for g in slices["by_genre"].values()) == 2058  # every EWT test sentence
        assert slices["unseen_predicates"]["predicates"] > 100 and 0 <= slices["unseen_predicates"]["f1"] <= 100
        # the whole split as the packaged file scores it: the run's figure, give or take 16-bit storage,
        # decoded as the run's evaluation was (a run evaluated before frame constraints: without them)
        run_test = read_card(SHIPPED / name)["evaluation"]["test.predicted"]
        same = slices["all"] if run_test.get("constraints", False) else slices["all_without_constraints"]
        assert slices["constraints"] and slices["all"]["sentences"] == 2058 and same["sentences"] == 2058
        assert abs(same["f1"] - run_test["srl"]["f1"]) < 0.1, name
    parser_card = read_card(DEFAULT_PARSER)
    assert parser_card["kind"] == "parser" and 0 < parser_card["evaluation"]["test.parse"]["uas"] < 100


def test_load_and_predict_without_a_path_use_the_shipped_model(default_predictor):
    from lisa_tf_cli.main import main

    [frame] = default_predictor.predict("The cat sat on the mat.")
    assert [t["text"] for t in frame["tokens"]] == ["The", "cat", "sat", "on", "the", "mat", "."]
    assert [p["text"] for p in frame["predicates"]] == ["sat"]
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["predict", "The cat sat on the mat.", "--format", "jsonl"]) == 0
    assert json.loads(out.getvalue()) == {"line": 1, **frame}


def test_predict_labels_through_the_packaged_export_without_building_a_keras_model(tmp_path, default_predictor):
    """Once ``serve`` or ``export`` has built the package's SavedModel (:mod:`lisa_tf.packages.export_cache`),
    ``predict`` starts from it (no Keras model classes imported or built, no tracing: the cold start
    ``benchmarks/labelling_speed.py`` measures) and writes the frames the ``.keras`` model gives."""
    import subprocess
    import sys

    texts = ["The dog barked at the mailman. Shares soared on Tuesday.", "Mr. Smith didn't agree with them, did he?"]
    source = tmp_path / "in.txt"
    source.write_text("\n".join(texts) + "\n", encoding="utf-8")
    program = ("import sys; sys.argv = ['-m']\n"
               "from lisa_tf_cli.main import main\n"
               f"code = main(['predict', '--input', {str(source)!r}, '--format', 'jsonl'])\n"
               "keras = {'lisa_tf.models', 'lisa_tf.models.runs', 'lisa_tf.labelling.batches'} & set(sys.modules)\n"
               "print(sorted(keras) or 'NO KERAS MODEL', file=sys.stderr)\n"
               "sys.exit(code)")
    shipped_export("srl")
    done = subprocess.run([sys.executable, "-c", program], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stderr.strip().splitlines()[-1] == "NO KERAS MODEL"
    written = [json.loads(line) for line in done.stdout.splitlines()]
    expected = default_predictor.predict(paragraphs=texts)
    assert len(written) == len(expected) == 3
    for got, want in zip(written, expected):
        assert [t["text"] for t in got["tokens"]] == [t["text"] for t in want["tokens"]]
        assert [(p["token"], [(a["role"], a["token_start"], a["token_end"]) for a in p["arguments"]])
                for p in got["predicates"]] == [
            (p["token"], [(a["role"], a["token_start"], a["token_end"]) for a in p["arguments"]])
            for p in want["predicates"]]


def test_rest_server_on_the_shipped_model_answers_as_its_predictor(default_predictor):
    """The REST ``text`` answer of the shipped model (what ``serve`` without ``--model_base_path`` serves)
    carries the same predicates and argument spans as ``lisa_tf.load()`` on the same text."""
    from export.rest_server import make_server

    text = "Yesterday the company announced that it will open a new office in Boston next year."
    server = make_server("srl", shipped_export("srl"), port=0, warn=lambda m: None)
    server.start_in_thread()
    try:
        body = json.dumps({"signature_name": "text", "instances": [{"text": text}]}).encode()
        url = f"http://127.0.0.1:{server.port}/v1/models/srl:predict"
        with urllib.request.urlopen(urllib.request.Request(url, data=body), timeout=60) as response:
            [answer] = json.loads(response.read())["predictions"]
    finally:
        server.stop()
    [frame] = default_predictor.predict(text)
    shown = {}
    for p, position in enumerate(answer["predicate_positions"]):
        if position >= 0:
            shown[position] = [(role, start, end) for role, start, end in zip(
                answer["argument_roles"][p], answer["argument_token_starts"][p], answer["argument_token_ends"][p]) if role]
    assert shown and shown == {p["token"]: [(a["role"], a["token_start"], a["token_end"]) for a in p["arguments"]]
                               for p in frame["predicates"]}


def test_parse_without_a_model_uses_the_shipped_parser(tmp_path):
    from data_pipeline.readers.conllu import read_conllu
    from lisa_tf.decoding.mst import is_tree
    from lisa_tf_cli.main import main

    text = tmp_path / "in.txt"
    text.write_text("The cat sat on the mat.\nMr. Smith didn't agree with the plan, so he left early.\n")
    assert main(["parse", "--input", str(text), "--out", str(tmp_path / "out.conllu")]) == 0
    parsed = read_conllu(tmp_path / "out.conllu")
    assert [s.words for s in parsed][0] == ["The", "cat", "sat", "on", "the", "mat", "."]
    assert len(parsed) == 2 and all(is_tree(s.heads) for s in parsed)
    # both tag columns: UD's universal tags and the Penn Treebank tags
    assert parsed[0].upos == ["DET", "NOUN", "VERB", "ADP", "DET", "NOUN", "PUNCT"]
    assert parsed[0].pos == ["DT", "NN", "VBD", "IN", "DT", "NN", "."]


@pytest.mark.parametrize("name", ["parser", "parser-fast"])
def test_shipped_parser_gives_a_tree_for_every_ewt_dev_and_test_sentence(name):
    """One root, no cycle on real data through the .keras file (Chu-Liu-Edmonds: every dev and test
    sentence with the fast parser; the first 300 dev sentences with the MiniLM one, whose encoder makes the
    whole set a minutes-long run and whose trees come from the same decoder), and on the first 300 dev
    sentences through the export (Eisner, in-graph)."""
    import tensorflow as tf

    from lisa_tf.decoding.mst import is_tree
    from lisa_tf.labelling.parse import parse_sentences

    sentences = [s for split in ("dev", "test")
                 for s in read_split(str(ROOT / f"data/propbank-ewt/{split}.conllu.gz"), "conllu", None, 0)]
    assert len(sentences) == 1968 + 2058
    every = sentences if name == "parser-fast" else sentences[:300]
    parsed = parse_sentences(load_model_file(SHIPPED / name / KERAS_FILE), every)
    assert len(parsed) == len(every) and all(is_tree(s.heads) for s in parsed)
    signature = tf.saved_model.load(str(shipped_export(name) / "1")).signatures["serving_default"]
    ordered = sorted(sentences[:300], key=len)
    for start in range(0, len(ordered), 50):
        chunk = ordered[start:start + 50]
        width = max(len(s) for s in chunk)
        heads = signature(tokens=tf.constant([list(s.words) + [""] * (width - len(s)) for s in chunk]))["heads"]
        assert all(is_tree(row[:len(s)]) for s, row in zip(chunk, heads.numpy().tolist()))


def test_shipped_models_are_named_without_a_path(tmp_path, monkeypatch, capsys, default_predictor):
    """``load("srl")``, ``predict --model parser`` and ``serve --model_name NAME`` name the shipped models
    (``models/NAME``); a path that exists wins over a name, and an unknown name lists the shipped ones."""
    import lisa_tf
    from lisa_tf.packages.finding import model_path, shipped_names
    from lisa_tf_cli.main import main

    assert {"srl", "srl-fast", "parser", "parser-fast"} <= set(shipped_names())
    # the default is the fine-tuned MiniLM model, srl-fast the GloVe one
    assert (default_predictor.model.config.contextual, lisa_tf.load("srl-fast").model.config.contextual) == ("minilm", "")
    monkeypatch.chdir(tmp_path)
    assert model_path("srl") == DEFAULT_SRL and model_path("parser", "parser") == DEFAULT_PARSER
    [frame] = lisa_tf.load("srl").predict("The cat sat on the mat.")
    assert [p["text"] for p in frame["predicates"]] == ["sat"]
    (tmp_path / "srl").mkdir()
    assert model_path("srl") == pathlib.Path("srl")  # a local directory of that name is what was meant
    with pytest.raises(FileNotFoundError, match=r"srl-huge: no such file or directory, and no shipped model of that "
                                                r"name \(shipped: .*parser.*srl"):
        model_path("srl-huge")
    assert main(["serve", "--model_name", "srl-huge", "--rest_api_port", "0"]) == 2
    assert "error: no --model_base_path given and 'srl-huge' is not a shipped model; shipped: " in capsys.readouterr().err


@pytest.mark.parametrize("name", shipped_names())
def test_a_packages_recorded_data_paths_are_the_projects_on_any_clone(name):
    """A package records its run's config with the data paths inside the project relative to it, as a config
    file writes them (so ``evaluate`` finds the training data of the most-frequent-sense baseline, and
    ``adapt`` the run's settings, on any clone), never the directories of the machine that built it."""
    from lisa_tf.config import _PATH_FIELDS, project_path

    data = json.loads((SHIPPED / name / "assets" / "config.json").read_text())["data"]
    paths = [data[key] for key in _PATH_FIELDS if data.get(key)]
    paths += list(data["test"].values())
    assert paths and all(path.startswith("data/") for path in paths), paths
    assert all(pathlib.Path(project_path(path)).is_file() for path in paths)
