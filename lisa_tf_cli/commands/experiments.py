"""``python -m lisa_tf experiments`` (what ``./run_experiments.sh`` runs)."""

HELP = "run the papers' experiments end to end on open, conll05 or conll12 data"


def add_arguments(parser):
    parser.add_argument("dataset", choices=("open", "conll05", "conll12"))
    parser.add_argument("--data-dir", help="conll05: the conll05st-release directory; conll12: train/development/test")
    parser.add_argument("--parse-dir", help="CoNLL-U parses from an external parser: dev.conllu, test.conllu, ...")
    parser.add_argument("--quick", action="store_true", help="tiny models on a slice of the data (minutes)")
    parser.add_argument("--all", action="store_true", help="also DeepAtt-RNN and DeepAtt-CNN")
    parser.add_argument("--models", nargs="+",
                        help="only these (sa lisa deepatt_ffn selective ...), twins included (lisa_minilm lisa_finetune)")
    parser.add_argument("--contextual", action="store_true",
                        help="also train each model with MiniLM word vectors (requirements-contextual.txt), the "
                             "encoder frozen (the \"+ MiniLM\" rows, the papers' +ELMo condition) and fine-tuned "
                             "(the \"+ MiniLM fine-tuned\" rows)")
    parser.add_argument("--out", help="output directory (default results/DATASET[-quick])")
    parser.add_argument("--set", nargs="+", default=[], metavar="KEY=VALUE",
                        help="config overrides for every model trained, parsers included (after the configs and "
                             "--quick), e.g. --set train.max_steps=60 data.max_eval_sentences=20")


def run(args) -> int:
    """A wrong data layout raises ``DatasetLayoutError`` (reported by the CLI as one line, exit 2)."""
    from lisa_tf_cli.experiments import run_experiments

    run_experiments(args.dataset, args.data_dir, args.parse_dir, args.quick, args.out, args.all, args.models,
                    args.contextual, args.set)
    return 0
