"""``python -m lisa_tf evaluate``: the metrics as tables on the terminal (SRL first, its F1 the first
figure); the whole metrics JSON in ``--out FILE`` (with the tables in ``FILE.md`` beside it) or, with
``--json``, on standard output instead of the tables, for scripts."""

import pathlib

HELP = ("evaluate trained run(s) or a model on a data set: SRL (both scorer conventions), predicates, POS, "
        "parsing")


def add_arguments(parser):
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--run", nargs="+", help="run directory; several runs = ensemble (averaged softmax)")
    which.add_argument("--model", help="a packaged model (models/srl, or its name: srl, srl-fast, parser), a .keras "
                                       "file, a SavedModel export or a run directory")
    parser.add_argument("--data", required=True, help="data in the model's format (file or directory)")
    parser.add_argument("--format", help="data format if it differs from the model's (conll05, conll12, lisa, conllu); "
                                         "needed for a .keras file, which records none")
    parser.add_argument("--parse", help="CoNLL-U file: inject these dependency heads into the syntax head (LISA)")
    parser.add_argument("--gold-parse", action="store_true", help="inject the data's own gold heads (LISA)")
    parser.add_argument("--data-parse", help="CoNLL-U file with the data's gold heads (when the data has none)")
    parser.add_argument("--gold-predicates", action="store_true", help="score with the gold predicates given")
    parser.add_argument("--predicates", choices=("all", "verbal"), default="all",
                        help="all (default): score every predicate; verbal: only those at the tokens the model's own "
                             "tags call verbs, gold and predicted alike, as predict --predicates verbal keeps them "
                             "(no nouns, no auxiliaries; LISA and SA, which predict POS tags)")
    parser.add_argument("--no-constraints", dest="constraints", action="store_false",
                        help="decode with the plain BIO Viterbi instead of the frame constraints (default: at most one "
                             "of each core role, C-/R- after their role, only the predicted roleset's core roles)")
    parser.add_argument("--weights", default="best", help="with --run: best (default), final, or a weights file")
    parser.add_argument("--limit", type=int, default=0, help="evaluate the first N sentences only")
    parser.add_argument("--out", help="write the metrics JSON here (and the tables as Markdown beside it, FILE.md); "
                                      "the terminal still shows the tables")
    parser.add_argument("--json", action="store_true",
                        help="print the metrics JSON on standard output instead of the tables (for scripts)")


def check(args) -> None:
    """Before TensorFlow is imported: ``--model``, the data and parse files, the ``--out`` path."""
    import os

    from data_pipeline.errors import UserError
    from data_pipeline.readers import FORMATS
    from lisa_tf.util.atomic_files import check_writable
    from lisa_tf_cli.commands._text_input import check_model, check_readable

    if args.model is not None:
        try:
            check_model(args.model)
        except UserError as error:
            raise UserError(f"--model {error}") from None
    if args.format is not None and args.format not in FORMATS:
        raise UserError(f"--format {args.format}: unknown format; expected one of {', '.join(FORMATS)}")
    if not os.path.exists(args.data):
        raise UserError(f"--data {args.data}: no such file or directory; expected data in the model's format")
    check_readable(args.parse, "--parse")
    check_readable(args.data_parse, "--data-parse")
    if args.out:  # before the evaluation, which may take long
        check_writable(args.out, "--out")
        check_writable(pathlib.Path(args.out).with_suffix(".md"), "--out")


def unseen_labels_line(unseen: dict) -> str:
    """One warning line naming the gold role labels the run never saw in training, with their counts."""
    total = sum(unseen.values())
    labels = ", ".join(f"{label} ({count})" for label, count in unseen.items())
    return (f"warning: {total} gold argument(s) have role labels the run never saw in training, so it cannot "
            f"predict them (each counts as a miss): {labels}")


def run(args) -> int:
    import json
    import sys

    from lisa_tf.evaluation.runs import evaluate_model, evaluate_runs, metrics_markdown
    from lisa_tf.util.atomic_files import write_text

    check(args)
    options = dict(data_format=args.format, parse=args.parse, gold_parse=args.gold_parse, data_parse=args.data_parse,
                   gold_predicates=args.gold_predicates, limit=args.limit, predicates=args.predicates,
                   constraints=args.constraints)
    if args.model is not None:
        metrics = evaluate_model(args.model, args.data, **options)
    else:
        metrics = evaluate_runs(args.run, args.data, weights=args.weights, **options)
    text = json.dumps(metrics, indent=2)
    markdown = metrics_markdown(metrics)
    if args.out:
        out = pathlib.Path(args.out)
        write_text(out, text + "\n")  # whole or not at all: a kill leaves the old file, never a cut one
        write_text(out.with_suffix(".md"), markdown + "\n")
    print(text if args.json else markdown)
    if args.out and not args.json:
        print(f"metrics written to {args.out} (tables in {pathlib.Path(args.out).with_suffix('.md')})")
    if metrics.get("unseen_labels"):  # SRL only: a parser run has no role labels
        print(unseen_labels_line(metrics["unseen_labels"]), file=sys.stderr)
    return 0
