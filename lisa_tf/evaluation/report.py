"""``results.md`` of an experiment run, in the papers' table layouts (from ``results.json``)."""

from __future__ import annotations

from lisa_tf.evaluation.tables import parsing_table, predicate_table, srl_table

SPLIT_NAMES = {"dev": "Dev", "test": "Test", "wsj": "WSJ Test", "brown": "Brown Test"}

#: The run-key suffixes of a model's twins with contextual word vectors (``--contextual``): the frozen
#: encoder's (``lisa_minilm``) and the fine-tuned one's (``lisa_finetune``), with their table names.
TWINS = {"_minilm": " + MiniLM", "_finetune": " + MiniLM fine-tuned"}


def base_key(key: str) -> str:
    """The model of a run key: ``lisa_finetune`` → ``lisa``."""
    return next((key.removesuffix(suffix) for suffix in TWINS if key.endswith(suffix)), key)


def with_twins(keys) -> list:
    """Each model key followed by its twins': the "+ MiniLM" rows sit under their model's."""
    return [run for key in keys for run in (key, *(key + suffix for suffix in TWINS))]


def _rows(results: dict, splits, condition: str, metric: str, models) -> dict:
    rows = {}
    for key, suffix in models:
        entry = results["models"].get(key)
        if not entry:
            continue
        row = {SPLIT_NAMES.get(s, s): entry["eval"][f"{s}.{condition}"][metric]
               for s in splits if f"{s}.{condition}" in entry["eval"]}
        if row:
            rows[entry["name"] + suffix] = row
    return rows


def results_markdown(results: dict, splits) -> str:
    """Markdown tables: SRL with predicted predicates (both conventions), with gold predicates,
    parsing (POS/UAS/LAS) and predicate detection."""
    # DeepAtt and Selective Connection: predicted predicates come from their predicate identifier.
    all_models = [(k, "") for k in with_twins(("sa", "lisa", "deepatt_ffn", "deepatt_rnn", "deepatt_cnn", "selective"))]
    lisa_parses = [(k, " + gold parse") for k in with_twins(["lisa"])]
    predicted = _rows(results, splits, "predicted", "srl", all_models)
    predicted.update(_rows(results, splits, "gold_parse", "srl", lisa_parses))
    external = " + D&M parse" if results.get("parse_source") == "D&M" else " + external parse"
    predicted.update(_rows(results, splits, "external_parse", "srl", [(k, external) for k in with_twins(["lisa"])]))
    swap = _rows(results, splits, "predicted", "srl_swap", all_models)
    swap.update(_rows(results, splits, "gold_parse", "srl_swap", lisa_parses))
    gold = _rows(results, splits, "gold_predicates", "srl", all_models)
    parts = [f"# Results: {results['dataset']}{' (quick)' if results.get('quick') else ''}"]
    for rows, caption in (
        (predicted, "**SRL, predicted predicates** (srl-eval single run, LISA Table 1 layout): P / R / F1"),
        (swap, "**SRL, predicted predicates, end-to-end convention** (He et al.: precision from the swapped run)"),
        (gold, "**SRL, gold predicates** (LISA Table 2 / DeepAtt Table 1 layout)"),
    ):
        if rows:
            parts.append(srl_table(rows, caption=caption))
    parsing = {}
    detection = {}
    for key, _ in all_models:
        entry = results["models"].get(key)
        if not entry:
            continue
        for split in splits:
            scores = entry["eval"].get(f"{split}.predicted", {}).get("parsing")
            if scores:
                if "pos" in scores:
                    parsing[f"{entry['name']} ({SPLIT_NAMES.get(split, split)})"] = scores
                detection.setdefault(entry["name"], {})[SPLIT_NAMES.get(split, split)] = {
                    k: scores[f"predicate_{k}"] for k in ("precision", "recall", "f1")}
    for parser in filter(None, (results.get(key) for key in with_twins(["parser"]))):
        # the "+D&M" parser itself (and its MiniLM twins), against the gold trees
        for split in splits:
            scores = parser["eval"].get(f"{split}.parse")
            if scores:
                parsing[f"{parser['name']} ({SPLIT_NAMES.get(split, split)})"] = scores
    if parsing:
        parts.append(parsing_table(parsing, caption="**Parsing** (each model's own parse, punctuation excluded; "
                                                    "LISA Table 5 layout)"))
    if detection:
        parts.append(predicate_table(detection, caption="**Predicate detection** (LISA Table 6 layout)"))
    rest = {results["models"][k]["name"]: results["models"][k]["rest"]["status"] for k in results["models"]}
    parts.append("REST smoke request against each export: " + ", ".join(f"{n} {s}" for n, s in rest.items()))
    parts.append(f"Wall time: {results['seconds'] / 60:.1f} min (this invocation).")
    return "\n\n".join(parts) + "\n"
