"""MODEL_CARD.md rendering: every figure lands in its own row and column (lisa_tf.packages.model_card)."""

from lisa_tf.packages.model_card import parser_card_markdown, srl_card_markdown


def _srl(p, r, f, roles=None):
    return {"precision": p, "recall": r, "f1": f, **({"per_role": roles} if roles else {})}


def _counts(correct, missed, f1):
    return {"correct": correct, "excess": 1, "missed": missed, "precision": f1 + 1, "recall": f1 - 1, "f1": f1}


def _card():
    roles = {"ARG0": _counts(300, 100, 71.25), "ARG1": _counts(500, 200, 66.5), "ARGM-TMP": _counts(10, 5, 40.75)}
    training = {"config": {"data": {"train": "data/propbank-ewt/train.gold_conll.gz",
                                    "dev": "data/propbank-ewt/dev.gold_conll.gz", "format": "conll12"},
                           "model": {"kind": "lisa", "num_layers": 6}, "train": {"max_steps": 2000}},
                "steps": 2000, "best_step": 1500, "best_dev_f1": 55.55, "minutes": 14.3, "evaluations": 4,
                "settings": {"model": {"kind": "lisa", "num_layers": 6}, "train": {"max_steps": 2000}},
                "dev_sentences": 600}
    return {
        "kind": "srl", "name": "LISA", "dataset": "open", "training": training, "parameters": 1234567,
        "labels": {"roles": ["ARG0", "ARG1", "ARGM-TMP"], "pos": ["DT", "NN"], "dep": ["nsubj", "root"]},
        "evaluation": {
            "dev.predicted": {"srl": _srl(51.11, 52.22, 51.66), "f1_by_length": {"0-10": 61.01, "11-20": 55.02},
                              "parsing": {"predicate_f1": 90.01, "uas": 80.02, "las": 75.03, "pos": 93.04}},
            "test.predicted": {"srl": _srl(53.11, 54.22, 53.66, roles), "f1_by_length": {"0-10": 62.01, "11-20": 56.02},
                               "parsing": {"predicate_f1": 91.01, "uas": 81.02, "las": 76.03, "pos": 94.04}},
            "dev.gold_parse": {"srl": _srl(60.1, 61.2, 60.65)},
            "test.gold_parse": {"srl": _srl(62.1, 63.2, 62.65)},
            "dev.external_parse": {"srl": _srl(55.1, 56.2, 55.65)},
            "test.external_parse": {"srl": _srl(57.1, 58.2, 57.65)},
            "dev.gold_predicates": {"srl": _srl(65.1, 66.2, 65.65)},
        },
        "parser": {"name": "D&M parser", "evaluation": {"dev.parse": {"uas": 86.11, "las": 82.22},
                                                         "test.parse": {"uas": 86.33, "las": 82.44}}},
        "licences": ["PropBank-EWT: CC BY-SA 4.0", "GloVe: PDDL"],
        "files": {"keras_bytes": 5 * 2 ** 20, "weights": "float16", "run": "results/open/runs/lisa"},
        "check": {"split": "dev", "data": "x", "format": "conll12", "sentences": 200, "condition": "own parse", "f1": 49.87,
                  "f1_float32": 49.91},
        "slices": {"split": "test", "data": "x", "condition": "predicted predicates, own parse",
                   "by_genre": {"weblog": {"sentences": 214, "predicates": 804, "precision": 52.18, "recall": 41.4,
                                           "f1": 46.17},
                                "email": {"sentences": 605, "predicates": 1197, "precision": 64.8, "recall": 60.44,
                                          "f1": 62.55}},
                   "unseen_predicates": {"predicates": 207, "precision": 54.61, "recall": 15.91, "f1": 24.64},
                   "all": {"sentences": 2058, "predicates": 4795, "precision": 53.12, "recall": 54.21, "f1": 53.67}},
        "package": "srl-fast",
        "weights_licence": "The model's weights: CC BY-SA 4.0",
    }


def _row(markdown, start):
    rows = [line for line in markdown.splitlines() if line.startswith(f"| {start} |")]
    assert len(rows) == 1, (start, rows)
    return [cell.strip() for cell in rows[0].strip("|").split("|")]


def test_srl_card_puts_each_figure_in_its_row():
    text = srl_card_markdown(_card())
    assert _row(text, "predicted predicates, own parse")[1:] == ["51.11", "52.22", "51.66", "53.11", "54.22", "53.66"]
    assert _row(text, "predicted predicates, + D&M parse (injected)")[1:] == ["55.10", "56.20", "55.65", "57.10",
                                                                              "58.20", "57.65"]
    assert _row(text, "predicted predicates, + gold parse (injected)")[3] == "60.65"
    # a condition evaluated on dev only: the test cells say so
    assert _row(text, "gold predicates, own parse")[1:] == ["65.10", "66.20", "65.65", "–", "–", "–"]
    assert _row(text, "UAS of its own parse")[1:] == ["80.02", "81.02"]
    assert _row(text, "D&M parser LAS (the injected parse)")[1:] == ["82.22", "82.44"]
    assert _row(text, "Test")[1:] == ["62.01", "56.02"]  # F1 by length
    # per-role rows ordered by gold frequency (correct + missed), with the count
    roles = [line.split("|")[1].strip() for line in text.splitlines() if line.startswith("| ARG")]
    assert roles == ["ARG1", "ARG0", "ARGM-TMP"]
    assert _row(text, "ARG0")[1:] == ["400", "72.25", "70.25", "71.25"]
    assert "2,000 steps" in text and "best dev F1 55.55 at step 1500 (on the first 600 dev sentences)" in text
    assert "14.30 minutes" in text
    assert "first 200 dev sentences" in text and "49.87" in text
    assert "1,234,567 parameters" in text and "(5.0 MB, 16-bit weights, loaded as float32)" in text
    assert "49.87 (the float32 weights before 16-bit storage: 49.91)" in text
    assert _row(text, "weblog")[1:] == ["214", "804", "52.18", "41.40", "46.17"]
    assert _row(text, "email")[1:] == ["605", "1,197", "64.80", "60.44", "62.55"]
    # the whole split as this (16-bit) file scores it: what evaluate --model prints, named with its command
    assert _row(text, "**all**")[1:] == ["2,058", "4,795", "53.12", "54.21", "53.67"]
    assert "`python -m lisa_tf evaluate --model srl-fast --data x` prints it" in text
    assert "the training run's (float32 weights)" in text
    assert "On the 207 test predicates whose word never occurs in the training data: P 54.61, R 15.91, F1 24.64" in text
    assert "python -m lisa_tf package-model --model lisa --name srl-fast --float16\n" in text
    assert "50-dimensional GloVe vectors" in text
    assert "3 semantic roles: ARG0, ARG1, ARGM-TMP." in text
    assert "- GloVe: PDDL." in text and "not comparable with CoNLL-2005" in text
    assert "**Licence.** The model's weights: CC BY-SA 4.0." in text
    assert "| model | num_layers | 6 |" in text
    # a named package's examples name it; the default one's do not
    assert 'python -m lisa_tf predict --model srl-fast "The cat sat on the mat."' in text
    assert 'lisa_tf.load("srl-fast")' in text and "python -m lisa_tf serve --model_name srl-fast " in text


def test_the_rebuild_commands_name_the_parser_run_and_package_beside_the_model():
    card = _card()
    card["parser"].update(key="parser_finetune", package="parser")
    card["package"] = "srl"
    text = srl_card_markdown(card)
    assert "python -m lisa_tf package-model --model lisa --float16 --parser parser_finetune\n" in text
    assert 'python -m lisa_tf predict "The cat sat on the mat."' in text and "lisa_tf.load().predict" in text
    card["parser"].update(key="parser", package="parser-fast")
    card["package"] = "srl-fast"
    assert ("python -m lisa_tf package-model --model lisa --name srl-fast --float16 --parser-name parser-fast\n"
            in srl_card_markdown(card))
    del card["parser"]
    assert "python -m lisa_tf package-model --model lisa --name srl-fast --float16 --no-parser\n" in srl_card_markdown(card)
    assert "./run_experiments.sh open --models lisa\n" in srl_card_markdown(card)
    card["set"] = ["model.word_dropout=0.1", "train.max_steps=4000"]  # the experiment's overrides, given again
    assert ("./run_experiments.sh open --models lisa --set model.word_dropout=0.1 train.max_steps=4000\n"
            in srl_card_markdown(card))


def test_the_size_limit_names_the_word_vectors_the_model_has():
    card = _card()
    card["training"]["config"]["model"].update(contextual="minilm", contextual_trainable=True)
    text = srl_card_markdown(card)
    assert "MiniLM encoder (all-MiniLM-L6-v2, 6 layers) fine-tuned" in text and "GloVe vectors" not in text
    assert "fine-tuned with the task for 2,000 steps (0.2 hours of training)" in text  # the card's, not a fixed budget
    card["training"]["config"]["model"]["contextual_trainable"] = False
    assert "frozen MiniLM encoder" in srl_card_markdown(card)


def test_a_sense_model_card_shows_its_sense_accuracy_beside_the_baseline():
    card = _card()
    text = srl_card_markdown(card)
    assert "## Predicate senses" not in text and "predicate senses (rolesets) are not predicted" in text
    card["evaluation"]["test.gold_predicates"] = {"srl": _srl(66.1, 67.2, 66.65), "senses": {
        "gold_predicates": 4321, "accuracy": 95.51, "semantic": {"f1": 77.72},
        "most_frequent_sense": {"training_data": "train", "accuracy": 91.19}}}
    text = srl_card_markdown(card)
    section = text.split("## Predicate senses")[1].split("##")[0]
    assert "| Test | 4,321 | 95.51 | 91.19 | 77.72 |" in section and "| Dev |" not in section
    assert "not predicted" not in text and "marked `sense_source: frame_index`" in text


def test_parser_card_rows():
    card = _card()
    card.update(kind="parser", name="D&M parser", evaluation={"dev.parse": {"uas": 86.11, "las": 82.22, "pos": 94.5,
                                                                            "upos": 95.25, "sentences_per_second": 150.0}})
    card["labels"]["upos"] = ["NOUN", "VERB"]
    text = parser_card_markdown(card)
    assert _row(text, "Dev")[1:] == ["95.25", "94.50", "86.11", "82.22", "150.00"]
    assert "2 universal POS tags (UPOS): NOUN, VERB." in text
    # scored against gold data without a UPOS column: no UPOS column
    del card["evaluation"]["dev.parse"]["upos"]
    assert _row(parser_card_markdown(card), "Dev")[1:] == ["94.50", "86.11", "82.22", "150.00"]
    assert "| split | XPOS |" in parser_card_markdown(card)
    assert "| Test |" not in text  # not evaluated: no row
    assert "2 dependency labels (Universal Dependencies): nsubj, root." in text
    card["check"] = {"split": "dev", "sentences": 200, "uas": 85.87, "las": 81.83, "uas_float32": 85.9,
                     "las_float32": 81.8}
    assert ("UAS / LAS of `model.keras` on the first 200 dev sentences: 85.87 / 81.83 (the float32 weights before "
            "16-bit storage: 85.90 / 81.80)") in parser_card_markdown(card)


def test_a_card_that_replaced_a_package_shows_before_and_after():
    card = _card()
    card["evaluation"]["test.gold_predicates"] = {"senses": {"accuracy": 90.5, "gold_predicates": 4795,
                                                             "semantic": {"f1": 70.0}}}
    card["replaces"] = {
        "name": "LISA", "steps": 13500, "best_dev_f1": 72.3, "senses": 90.75,
        "slices": {"all": {"f1": 50.17}, "by_genre": {"weblog": {"f1": 47.0}, "email": {"f1": 60.05}},
                   "unseen_predicates": {"f1": 30.0}},
        "per_role": {"ARG1": _counts(480, 220, 65.0), "ARG0": _counts(290, 110, 72.0), "ARGM-TMP": _counts(9, 6, 30.75)}}
    assert "Started from" not in srl_card_markdown(card)
    card["training"]["config"]["train"]["init"] = "srl"
    markdown = srl_card_markdown(card)
    assert "- Started from the trained model `srl`, the `srl-fast` package this one replaced" in markdown
    assert "## Against the model it replaces" in markdown
    assert "13,500 steps, best dev F1 72.30" in markdown
    section = markdown.split("## Against the model it replaces")[1].split("\n## ")[0]
    assert _row(section, "**all** (constraints on)") == ["**all** (constraints on)", "50.17", "53.67", "+3.50"]
    assert _row(section, "weblog") == ["weblog", "47.00", "46.17", "-0.83"]
    assert _row(section, "unseen predicates") == ["unseen predicates", "30.00", "24.64", "-5.36"]
    assert _row(section, "sense accuracy (gold predicates)") == ["sense accuracy (gold predicates)", "90.75", "90.50",
                                                                 "-0.25"]
    # roles in the replaced card's order of frequency, with its gold counts
    before_after = [line for line in section.splitlines() if line.startswith("| ARG")]
    assert [line.split("|")[1].strip() for line in before_after] == ["ARG1", "ARG0", "ARGM-TMP"]
    assert [c.strip() for c in before_after[2].strip("|").split("|")] == ["ARGM-TMP", "15", "30.75", "40.75", "+10.00"]
    assert "## Against the model it replaces" not in srl_card_markdown(_card())


def test_packaging_over_a_package_keeps_the_figures_of_the_one_it_replaces(tmp_path):
    """Read from the shipped srl's own card: what a new srl's card sets beside its own figures."""
    import json

    from lisa_tf.packages.finding import ROOT
    from lisa_tf.packages.writing import _replaced

    shipped = json.loads((ROOT / "models" / "srl" / "card.json").read_text())
    replaced = _replaced(ROOT / "models" / "srl")
    assert replaced["slices"] == shipped["slices"] and replaced["best_dev_f1"] == shipped["training"]["best_dev_f1"]
    assert replaced["per_role"] == shipped["evaluation"]["test.predicted"]["srl"]["per_role"]
    assert replaced["senses"] == shipped["evaluation"]["test.gold_predicates"]["senses"]["accuracy"]
    assert _replaced(ROOT / "models" / "parser") is None and _replaced(tmp_path / "srl") is None
    (tmp_path / "srl").mkdir()
    (tmp_path / "srl" / "model.keras").write_bytes(b"")
    for text in ("{not json", '"a string"'):  # a card that cannot be read is replaced without a comparison
        (tmp_path / "srl" / "card.json").write_text(text)
        assert _replaced(tmp_path / "srl") is None


def _ablations_file(tmp_path, rows=None):
    """What benchmarks/ablations.py writes: the runs' own directories in each row, and figures derived from the
    curves (a card derives them again, so wrong ones here must not show)."""
    import json

    rows = rows if rows is not None else [
        {"name": "baseline", "run": "/somewhere/runs/abl_baseline", "changes": "(the shipped recipe)",
         "f1": {"500": 53.341, "1000": 61.767}, "best": 99.0, "delta_at": None, "delta": None},
        {"name": "linear schedule", "run": "/somewhere/runs/abl_linear", "changes": "train.schedule=linear",
         "f1": {"500": 52.822, "1000": 62.706, "1500": 67.024}, "best": 1.0, "delta_at": 500, "delta": 9.9}]
    path = tmp_path / "ablations.json"
    path.write_text(json.dumps({"steps": [500, 1000, 1500], "rows": rows}))
    return path


def test_a_card_shows_the_ablation_table_its_recipe_was_chosen_by(tmp_path):
    from lisa_tf.packages.writing import read_ablations

    card = _card()
    assert "## How the recipe was chosen" not in srl_card_markdown(card)
    card["ablations"] = read_ablations(_ablations_file(tmp_path))
    assert "/somewhere" not in str(card["ablations"])  # the runs' directories stay out of the card
    # best, and the change at the last step both runs reached (1,000: the baseline stopped there), from the curves
    section = srl_card_markdown(card).split("## How the recipe was chosen")[1].split("\n## ")[0]
    assert "| lever | what changed | dev F1 @ 500 | dev F1 @ 1,000 | dev F1 @ 1,500 | best | vs baseline |" in section
    assert _row(section, "baseline") == ["baseline", "(the shipped recipe)", "53.34", "61.77", "—", "61.77", ""]
    assert _row(section, "linear schedule") == ["linear schedule", "train.schedule=linear", "52.82", "62.71", "67.02",
                                                "67.02", "+0.94 @ 1,000"]


def test_an_ablation_file_that_is_not_the_benchmarks_table_is_refused_naming_it(tmp_path):
    import json

    import pytest

    from lisa_tf.packages.finding import PackagingError
    from lisa_tf.packages.writing import read_ablations, update_card

    bad_step = [{"name": "baseline", "changes": "(the shipped recipe)", "f1": {"500": 53.3}},
                {"name": "width", "changes": "model.hidden_size=256", "f1": {"750": 60.1}}]
    cases = [("{not json", "not JSON"), ('{"steps": [500]}', "expected the JSON of benchmarks/ablations.py"),
             (json.dumps({"steps": [500], "rows": bad_step}), "row 2: expected a name")]
    path = tmp_path / "ablations.json"
    for text, message in cases:
        path.write_text(text)
        with pytest.raises(PackagingError, match=message) as raised:
            read_ablations(path)
        assert str(path) in str(raised.value)
    with pytest.raises(PackagingError, match="cannot be read"):
        read_ablations(tmp_path / "absent.json")
    # with --update-card, a bad file or a parser's card fails before the model is read, and the card is untouched
    package = tmp_path / "parser"
    package.mkdir()
    (package / "model.keras").write_bytes(b"not read")
    (package / "card.json").write_text(json.dumps({"kind": "parser"}))
    with pytest.raises(PackagingError, match="a parser card has no recipe ablations"):
        update_card(package, ablations=_ablations_file(tmp_path))
    (package / "card.json").write_text(json.dumps({"kind": "srl"}))
    path.write_text("{")
    with pytest.raises(PackagingError, match="not JSON"):
        update_card(package, ablations=path)
    assert json.loads((package / "card.json").read_text()) == {"kind": "srl"}


def test_a_card_updated_after_the_fact_is_given_only_an_srl_package_it_replaced(tmp_path):
    """update_card(replaces=): a directory that is no SRL package is refused before the model is read, and the
    card is untouched."""
    import json

    import pytest

    from lisa_tf.packages.finding import ROOT, PackagingError
    from lisa_tf.packages.writing import update_card

    package = tmp_path / "srl-fast"
    package.mkdir()
    (package / "model.keras").write_bytes(b"not read")
    (package / "card.json").write_text(json.dumps({"kind": "srl"}))
    for wrong in (ROOT / "models" / "parser", tmp_path / "absent"):
        with pytest.raises(PackagingError, match="expected the SRL package that"):
            update_card(package, replaces=wrong)
    assert json.loads((package / "card.json").read_text()) == {"kind": "srl"}
