"""``MODEL_CARD.md`` of a packaged model, rendered from its ``card.json`` (:mod:`lisa_tf.packages.writing`).

Every figure comes from the card, which the packaging command fills from the run's files and the
experiment's evaluations; nothing here is a number of its own. Layout after Mitchell et al. (2019),
"Model Cards for Model Reporting": what the model is and how to use it, training data and licences,
training, results overall and by role and sentence length, the label set, and known limits.
"""

from __future__ import annotations

from lisa_tf.evaluation.tables import ablation_table, per_role_table

SPLITS = (("dev", "Dev"), ("test", "Test"))
#: SRL conditions of the experiment's evaluations, in the order of LISA's Table 1.
CONDITIONS = (
    ("predicted", "predicted predicates, own parse"),
    ("external_parse", "predicted predicates, + D&M parse (injected)"),
    ("gold_parse", "predicted predicates, + gold parse (injected)"),
    ("gold_predicates", "gold predicates, own parse"),
)
#: Roles shown in the per-role table: the most frequent in the test data.
TOP_ROLES = 16

LIMITS = (
    "Trained on web text only (the English Web Treebank: weblogs, newsgroups, e-mail, reviews, question "
    "answers); news, fiction or speech transcripts will be labelled less well.",
    "SENSES",
    "Verbal and other predicates are found by the model itself; a missed predicate loses all its arguments.",
    "SIZE",
    "English only; text is split into sentences and tokenised with the project's UD English-EWT tokeniser, "
    "and its mistakes carry over to the frames.",
)


def _mb(size: int) -> str:
    return f"{size / 2 ** 20:.1f} MB"


def _f(value) -> str:
    return "–" if value is None else f"{value:.2f}"


#: The frames line of the known limits, by whether the model has a sense head.
FRAMES = {
    False: "Unified PropBank frames of the propbank-release annotation: role numbering follows those frame files, "
           "and predicate senses (rolesets) are not predicted. Scores are not comparable with CoNLL-2005 or "
           "CoNLL-2012 results, which use other data, frames and splits.",
    True: "Unified PropBank frames of the propbank-release annotation: role numbering follows those frame files. A "
          "predicate's sense is chosen among the rolesets its word had in the training data or has in the shipped "
          "frame index; a word with index rolesets the model never saw gets the index's first roleset of its lemma, "
          "marked `sense_source: frame_index`, and a word unknown to both gets none. Scores are not comparable with "
          "CoNLL-2005 or CoNLL-2012 results, which use other data, frames and splits.",
}

#: The size line of the known limits, by the word vectors the model was trained with.
SIZES = {
    "glove": "A small model with 50-dimensional GloVe vectors, sized to train on a 2-core CPU: fast, but well below "
             "the published numbers of the same architecture on CoNLL data; a word outside its 16.6k-word "
             "vocabulary is unknown to it (see the unseen predicates above).",
    "frozen": "Word vectors from a frozen MiniLM encoder (all-MiniLM-L6-v2, 6 layers) with a small model sized to "
              "train on a 2-core CPU: below the published numbers of the architecture with ELMo on CoNLL data.",
    "fine-tuned": "A MiniLM encoder (all-MiniLM-L6-v2, 6 layers) fine-tuned with the task for {steps:,} steps "
                  "({hours:.1f} hours of training) on a 2-core CPU: smaller and trained far shorter than the "
                  "BERT-base models of published SRL results; about 4x slower than the GloVe model (srl-fast).",
}


def _vectors(card: dict) -> str:
    model = card["training"]["config"]["model"]
    if not model.get("contextual"):
        return "glove"
    return "fine-tuned" if model.get("contextual_trainable") else "frozen"


def _limits(card: dict, limits) -> list[str]:
    training = card["training"]
    size = SIZES[_vectors(card)].format(steps=training["steps"], hours=(training["minutes"] or 0) / 60.0)
    named = {"SIZE": size, "SENSES": FRAMES[_has_senses(card)]}
    return [named.get(limit, limit) for limit in limits]


def _has_senses(card: dict) -> bool:
    """Whether the card's model predicts senses: its evaluations score them."""
    return any("senses" in value for value in card["evaluation"].values() if isinstance(value, dict))


def _senses(card: dict) -> list[str]:
    """Sense accuracy on the gold predicates beside the most-frequent-sense baseline, and semantic F1."""
    rows = []
    for split, name in SPLITS:
        senses = card["evaluation"].get(f"{split}.gold_predicates", {}).get("senses")
        if senses:
            baseline = senses.get("most_frequent_sense", {}).get("accuracy")
            rows.append(f"| {name} | {senses['gold_predicates']:,} | {_f(senses['accuracy'])} | {_f(baseline)} | "
                        f"{_f(senses['semantic']['f1'])} |")
    if not rows:
        return []
    return ["## Predicate senses", "",
            "Each predicate's PropBank roleset (`bark.01`), scored on the gold predicates; the baseline gives each "
            "word the roleset it has most often in the training data. Semantic F1 counts each sense as one more "
            "dependency (CoNLL-2009).", "",
            "| split | gold predicates | sense accuracy | most frequent sense | semantic F1 |",
            "|---|---:|---:|---:|---:|"] + rows + [""]


def _files(card: dict) -> list[str]:
    files = card["files"]
    weights = files.get("weights", "float32")
    stored = "16-bit weights, loaded as float32" if weights == "float16" else "float32 weights"
    return [f"- `model.keras`: the Keras model ({_mb(files['keras_bytes'])}, {stored}); {card['parameters']:,} "
            "parameters. `assets/`: its run's configuration and training-data sizes (the request limits).",
            "- The TensorFlow Serving export is built from it: `python -m lisa_tf export --model NAME --out "
            "DIR/NAME/1`, or by `python -m lisa_tf serve` on its first start (cached; later starts reuse it).",
            f"- Built from the run `{files['run']}` by `python -m lisa_tf package-model`."]


def _training(card: dict) -> list[str]:
    training = card["training"]
    config = training["config"]
    lines = ["## Training", "",
             f"- Data: `{config['data']['train']}` (dev `{config['data']['dev']}`), format {config['data']['format']}.",
             f"- {training['steps']:,} steps, {training['evaluations']} dev evaluations; best dev F1 "
             f"{_f(training['best_dev_f1'])} at step {training['best_step']}"
             + (f" (on the first {training['dev_sentences']:,} dev sentences)" if training.get("dev_sentences") else "")
             + f" — its weights are shipped; {_f(training['minutes'])} minutes of training as recorded by the run "
             "(2-core CPU).", *_started_from(card), "",
             "Settings (those not listed are the defaults of `lisa_tf.config`; the whole configuration is "
             "the package's `assets/config.json`):", "",
             "| section | setting | value |", "|---|---|---|"]
    for section, settings in training["settings"].items():
        lines += [f"| {section} | {key} | {value} |" for key, value in sorted(settings.items())]
    return lines + [""]


def _results(card: dict) -> list[str]:
    evaluation = card["evaluation"]
    lines = ["## Results", "",
             "SRL precision / recall / F1 from the project's srl-eval (identical to `srl-eval.pl`), whole splits.", "",
             "| condition | Dev P | Dev R | Dev F1 | Test P | Test R | Test F1 |", "|---|---:|---:|---:|---:|---:|---:|"]
    for key, name in CONDITIONS:
        cells = []
        for split, _ in SPLITS:
            srl = evaluation.get(f"{split}.{key}", {}).get("srl")
            cells += [_f(srl and srl["precision"]), _f(srl and srl["recall"]), _f(srl and srl["f1"])]
        if any(cell != "–" for cell in cells):
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += ["", "| own predictions | Dev | Test |", "|---|---:|---:|"]
    for metric, name in (("predicate_f1", "predicate detection F1"), ("pos", "POS accuracy (XPOS)"),
                         ("uas", "UAS of its own parse"), ("las", "LAS of its own parse")):
        values = [evaluation.get(f"{split}.predicted", {}).get("parsing", {}).get(metric) for split, _ in SPLITS]
        if any(v is not None for v in values):
            lines.append(f"| {name} | " + " | ".join(_f(v) for v in values) + " |")
    parser = card.get("parser")
    if parser:
        for metric in ("uas", "las"):
            values = [parser["evaluation"].get(f"{split}.parse", {}).get(metric) for split, _ in SPLITS]
            lines.append(f"| {parser['name']} {metric.upper()} (the injected parse) | "
                         + " | ".join(_f(v) for v in values) + " |")
    lines += ["", "UAS/LAS exclude punctuation."]
    return lines + [""]


def _per_role(card: dict) -> list[str]:
    roles = card["evaluation"].get("test.predicted", {}).get("srl", {}).get("per_role")
    if not roles:
        return []
    table = per_role_table(roles, TOP_ROLES)
    return ["## F1 per role", "", f"Test, predicted predicates, own parse; the {len(table) - 2} most frequent roles.",
            ""] + table + [""]


def _slices(card: dict) -> list[str]:
    slices = card.get("slices")
    if not slices:
        return []
    lines = ["## F1 by genre and on unseen predicates", "",
             f"{slices['split'].capitalize()} split, {slices['condition']}. The English Web Treebank's genres, as "
             "its sentence ids name them:", "",
             "| genre | sentences | predicates | P | R | F1 |", "|---|---:|---:|---:|---:|---:|"]
    rows = {**slices["by_genre"], **({"**all**": slices["all"]} if "all" in slices else {})}
    lines += [f"| {genre} | {s['sentences']:,} | {s['predicates']:,} | {_f(s['precision'])} | {_f(s['recall'])} | "
              f"{_f(s['f1'])} |" for genre, s in rows.items()]
    if "all" in slices:
        lines += ["", f"The **all** row is this file's: `python -m lisa_tf evaluate --model {card['package']} --data "
                  f"{slices['data']}` prints it."
                  + (" It is decoded with frame constraints (at most one of each core role per predicate, "
                     "R- and C- roles only beside their role)." if slices.get("constraints") else "")
                  + (" The Results table above is the training run's (float32 weights); 16-bit storage may move "
                     "the last digit." if card["files"].get("weights") == "float16" else "")
                  + (f" Decoded without constraints, as the training run was evaluated: F1 "
                     f"{_f(slices['all_without_constraints']['f1'])}." if "all_without_constraints" in slices else "")]
    unseen = slices["unseen_predicates"]
    lines += ["", f"On the {unseen['predicates']:,} {slices['split']} predicates whose word never occurs in the "
              f"training data: P {_f(unseen['precision'])}, R {_f(unseen['recall'])}, F1 {_f(unseen['f1'])} "
              "(arguments of those predicates only; a predicate the model misses loses them all).", ""]
    return lines


def _change(before, after) -> list[str]:
    if before is None or after is None:
        return [_f(before), _f(after), "–"]
    return [_f(before), _f(after), f"{after - before:+.2f}"]


def _replaces(card: dict) -> list[str]:
    """Before → after against the package this one replaced (``card["replaces"]``, its card's own figures):
    the test split as a whole, by genre, on unseen predicates, sense accuracy and F1 per role."""
    old = card.get("replaces")
    if not old:
        return []
    new_slices, old_slices = card.get("slices") or {}, old.get("slices") or {}
    rows = [("**all** (constraints on)", old_slices.get("all", {}).get("f1"), new_slices.get("all", {}).get("f1"))]
    rows += [(genre, scores.get("f1"), new_slices.get("by_genre", {}).get(genre, {}).get("f1"))
             for genre, scores in old_slices.get("by_genre", {}).items()]
    rows.append(("unseen predicates", old_slices.get("unseen_predicates", {}).get("f1"),
                 new_slices.get("unseen_predicates", {}).get("f1")))
    senses = card["evaluation"].get("test.gold_predicates", {}).get("senses", {}).get("accuracy")
    rows.append(("sense accuracy (gold predicates)", old.get("senses"), senses))
    lines = ["## Against the model it replaces", "",
             f"The {card['package']} package this one replaced: {old.get('name')}, {old.get('steps') or 0:,} steps, best "
             f"dev F1 {_f(old.get('best_dev_f1'))}. Test split, predicted predicates, own parse, F1 as each card gives "
             "it.", "", "| test | before | after | change |", "|---|---:|---:|---:|"]
    lines += ["| " + " | ".join([name] + _change(before, after)) + " |" for name, before, after in rows]
    roles_before = old.get("per_role") or {}
    roles_after = card["evaluation"].get("test.predicted", {}).get("srl", {}).get("per_role") or {}
    frequent = sorted(roles_before, key=lambda role: -(roles_before[role]["correct"] + roles_before[role]["missed"]))
    if frequent and roles_after:
        lines += ["", "| role | gold arguments | before | after | change |", "|---|---:|---:|---:|---:|"]
        for role in frequent[:TOP_ROLES]:
            gold = roles_before[role]["correct"] + roles_before[role]["missed"]
            lines.append(f"| {role} | {gold:,} | " + " | ".join(
                _change(roles_before[role]["f1"], roles_after.get(role, {}).get("f1"))) + " |")
    return lines + [""]


def _ablations(card: dict) -> list[str]:
    """The levers of the training recipe, each tried alone at equal steps (``card["ablations"]``)."""
    recipe = card.get("ablations")
    if not recipe:
        return []
    return ["## How the recipe was chosen", "",
            "Each lever was one training run that changed one thing in the recipe of the first row, the baseline. "
            "The table gives dev F1 (srl-eval, predicted predicates, own parse) at equal steps on the same dev "
            "sentences. `docs/benchmarks.md` (\"Fine-tuning ablations\") gives each run's command and what the "
            "levers cost in labelling speed and senses; `benchmarks/ablations.py` makes this table from the runs.", ""] + ablation_table(recipe) + [""]


def _by_length(card: dict) -> list[str]:
    series = {name: card["evaluation"].get(f"{split}.predicted", {}).get("f1_by_length") for split, name in SPLITS}
    series = {name: values for name, values in series.items() if values}
    if not series:
        return []
    bins = list(next(iter(series.values())))
    lines = ["## F1 by sentence length", "", "Predicted predicates, own parse; sentence length in tokens.", "",
             "| split | " + " | ".join(bins) + " |", "|---|" + "---:|" * len(bins)]
    lines += [f"| {name} | " + " | ".join(_f(values.get(b)) for b in bins) + " |" for name, values in series.items()]
    return lines + [""]


def _labels(card: dict) -> list[str]:
    labels = card["labels"]
    lines = ["## Label set", ""]
    if labels["roles"]:
        lines.append(f"- {len(labels['roles'])} semantic roles: " + ", ".join(labels["roles"]) + ".")
    if labels["pos"]:
        lines.append(f"- {len(labels['pos'])} POS tags (Penn Treebank XPOS).")
    if labels.get("upos"):
        lines.append(f"- {len(labels['upos'])} universal POS tags (UPOS): " + ", ".join(labels["upos"]) + ".")
    if labels["dep"]:
        lines.append(f"- {len(labels['dep'])} dependency labels (Universal Dependencies): " + ", ".join(labels["dep"]) + ".")
    return lines + [""]


def _started_from(card: dict) -> list[str]:
    """The trained model a run started from (``train.init``), where it did."""
    init = card["training"]["config"].get("train", {}).get("init")
    if not init:
        return []
    replaced = card.get("replaces")
    return [f"- Started from the trained model `{init}`"
            + (f", the `{card.get('package', 'srl')}` package this one replaced (its figures: \"Against the model it "
               "replaces\" below; it stays in the repository's history)" if replaced else "") + "."]


def _footer(card: dict, limits) -> list[str]:
    lines = ["## Known limits", ""] + [f"- {limit}" for limit in _limits(card, limits)] + ["", "## Data and licences", ""]
    if card.get("weights_licence"):
        lines += [f"**Licence.** {card['weights_licence']}.", "", "Data and vectors it was built from:", ""]
    lines += [f"- {licence}." for licence in card["licences"]]
    if card["kind"] == "srl":
        key = card["files"]["run"].rstrip("/").rsplit("/", 1)[-1]
        options = f" --name {card['package']}" if card.get("package", "srl") != "srl" else ""
        options += " --float16" if card["files"].get("weights") == "float16" else ""
        parser = card.get("parser")
        if parser is None:
            options += " --no-parser"
        else:  # the parser run packaged beside it, and its package's name
            options += f" --parser {parser['key']}" if parser.get("key", "parser") != "parser" else ""
            options += f" --parser-name {parser['package']}" if parser.get("package", "parser") != "parser" else ""
        overrides = f" --set {' '.join(card['set'])}" if card.get("set") else ""
        lines += ["", "## Rebuilding", "", "```", f"./run_experiments.sh open --models {key}{overrides}",
                  f"python -m lisa_tf package-model --model {key}{options}", "```", ""]
    else:
        lines += ["", "## Rebuilding", "", "Packaged with the SRL model it parses for (`python -m lisa_tf package-model`, "
                  "see that model's card).", ""]
    return lines


def srl_card_markdown(card: dict) -> str:
    """The model card of a packaged SRL model."""
    check = card["check"]
    package = card.get("package", "srl")
    named = package != "srl"  # the default model needs no name
    lines = [f"# Model card: {card['name']} semantic role labeller ({card['dataset']} data)", "",
             f"{card['name']} trained on PropBank-EWT. It finds the predicates of each sentence and labels their "
             "arguments (who did what to whom, when, where), with its own POS tags and dependency parse.", "",
             "```", f'python -m lisa_tf predict{f" --model {package}" if named else ""} "The cat sat on the mat."',
             "python -c 'import lisa_tf; "
             f'print(lisa_tf.load({repr(package).replace(chr(39), chr(34)) if named else ""}).predict("The cat sat on the mat."))\'',
             f"python -m lisa_tf serve{f' --model_name {package}' if named else ''}"
             "            # TensorFlow Serving REST API and demo page on 127.0.0.1:8501",
             "```", ""]
    lines += (_files(card) + [""] + _training(card) + _results(card) + _senses(card) + _slices(card) + _per_role(card)
              + _replaces(card) + _ablations(card) + _by_length(card))
    float32 = f" (the float32 weights before 16-bit storage: {_f(check['f1_float32'])})" if "f1_float32" in check else ""
    decoding = ", decoded with frame constraints" if check.get("constraints") else ""
    unconstrained = check.get("without_constraints")
    before = (f" Decoded without constraints: {_f(unconstrained['f1'])}, and "
              f"{_f(unconstrained['f1_float32'])} with the float32 weights before 16-bit storage."
              if unconstrained and "f1_float32" in unconstrained else "")
    lines += ["## Check of the shipped file", "",
              f"F1 of `model.keras` on the first {check['sentences']} {check['split']} sentences ({check['condition']}"
              f"{decoding}): {_f(check['f1'])}{float32}.{before} `tests/test_shipped_model.py` recomputes it.", ""]
    return "\n".join(lines + _labels(card) + _footer(card, LIMITS))


def parser_card_markdown(card: dict) -> str:
    """The model card of the packaged dependency parser."""
    lines = [f"# Model card: {card['name']} (Dozat & Manning biaffine dependency parser, {card['dataset']} data)", "",
             "Parses tokenised English into UD dependency trees (heads, labels and POS tags). Its trees are the "
             "parse LISA takes at test time in the \"+ D&M parse\" condition.", "",
             "```", f"python -m lisa_tf parse {card.get('package', 'parser')} --input sentences.txt --out parsed.conllu",
             "python -m lisa_tf predict --parse parsed.conllu", "```", ""]
    lines += _files(card) + [""] + _training(card)
    evaluated = [(name, card["evaluation"][f"{split}.parse"]) for split, name in SPLITS
                 if card["evaluation"].get(f"{split}.parse")]
    upos = any("upos" in scores for _, scores in evaluated)  # scored against gold data with a UPOS column
    lines += ["## Results", "", "| split |" + (" UPOS |" if upos else "") + " XPOS | UAS | LAS | sentences/s |",
              "|---|" + ("---:|" if upos else "") + "---:|---:|---:|---:|"]
    for name, scores in evaluated:
        lines.append(f"| {name} |" + (f" {_f(scores.get('upos'))} |" if upos else "")
                     + f" {_f(scores.get('pos'))} | {_f(scores['uas'])} | {_f(scores['las'])} | "
                     f"{_f(scores.get('sentences_per_second'))} |")
    lines += ["", "UAS/LAS exclude punctuation; trees are decoded as maximum spanning trees (one root, no cycle).", ""]
    check = card.get("check") or {}
    if "las" in check:
        float32 = (f" (the float32 weights before 16-bit storage: {_f(check['uas_float32'])} / "
                   f"{_f(check['las_float32'])})") if "las_float32" in check else ""
        lines += ["## Check of the shipped file", "",
                  f"UAS / LAS of `model.keras` on the first {check['sentences']} {check['split']} sentences: "
                  f"{_f(check['uas'])} / {_f(check['las'])}{float32}. `tests/test_shipped_model.py` recomputes it.", ""]
    limits = (LIMITS[0], "A small parser (settings above) sized to train on a 2-core CPU"
                         + (", with a MiniLM encoder" if _vectors(card) != "glove" else "")
                         + ": below the published accuracy of the architecture.", LIMITS[4])
    return "\n".join(lines + _labels(card) + _footer(card, limits))
