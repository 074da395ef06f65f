"""``python -m lisa_tf package-model``: the shipped models and their model cards (:mod:`lisa_tf.packages.writing`)."""

HELP = "package an experiment's SRL model and D&M parser into models/ with their model cards"


def add_arguments(parser):
    from lisa_tf.packages.finding import ROOT, SHIPPED

    parser.add_argument("--results", default=str(ROOT / "results" / "open"),
                        help="output directory of ./run_experiments.sh open (default results/open)")
    parser.add_argument("--model", default="lisa",
                        help="run key of the SRL model to ship, as in results.json: lisa (default), sa, lisa_finetune, ...")
    parser.add_argument("--name", default="srl", help="the package's name: models/NAME (default srl)")
    parser.add_argument("--parser", default="parser",
                        help="run key of the D&M parser to ship beside it (default parser; parser_finetune, ...)")
    parser.add_argument("--parser-name", default="parser", help="the parser package's name (default parser); with --update-card, the "
                                                         "name of the parser package beside it, for the card's commands")
    parser.add_argument("--no-parser", action="store_true", help="package the SRL model alone")
    parser.add_argument("--float16", action="store_true",
                        help="store the weights in 16 bits (half the file; they load as float32; the card records "
                             "the check F1 of both precisions)")
    parser.add_argument("--out", default=str(SHIPPED), help="where the packages go (default models/)")
    parser.add_argument("--update-card", metavar="PACKAGE", default=None,
                        help="instead of packaging: recompute the figures PACKAGE's card takes from its own file "
                             "(dev check, F1 by genre, unseen predicates) and render MODEL_CARD.md again")
    parser.add_argument("--ablations", metavar="JSON", default=None,
                        help="the recipe's ablation table, as benchmarks/ablations.py writes it "
                             "(benchmarks/out/ablations.json): the SRL card shows it (also with --update-card)")
    parser.add_argument("--replaces", metavar="PACKAGE", default=None,
                        help="with --update-card: the SRL package this one replaced (e.g. from an earlier commit: "
                             "git worktree add ../before REV, then ../before/models/NAME); the card shows its "
                             "figures before -> after, as packaging over a package does")
    parser.add_argument("--rebuild-lexicon", action="store_true",
                        help="with --update-card: first rebuild the model's sense lexicon with this code (its "
                             "training data, the shipped frame index and word forms), same weights")


def run(args) -> int:
    from lisa_tf.packages.writing import package_models, update_card

    if args.replaces is not None and args.update_card is None:
        from lisa_tf.packages.finding import PackagingError

        raise PackagingError("--replaces: expected with --update-card PACKAGE; packaging over a package keeps the "
                             "figures of the one it replaces by itself")
    if args.update_card is not None:
        card = update_card(args.update_card, args.parser_name, args.rebuild_lexicon, args.ablations,
                           args.replaces)
        print(f"{args.update_card}: card updated; check on the first {card['check']['sentences']} dev sentences: "
              + ", ".join(f"{key} {card['check'][key]:.2f}" for key in ("f1", "uas", "las") if key in card["check"]))
        return 0
    cards = package_models(args.results, args.out, args.model, args.name, None if args.no_parser else args.parser,
                           args.parser_name, args.float16, args.ablations)
    for name, card in cards.items():
        files = card["files"]
        print(f"{name}: {card['name']} -> {args.out}/{name} (.keras {files['keras_bytes'] / 2 ** 20:.1f} MB, "
              f"{files['weights']} weights)")
    check = cards[args.name]["check"]
    also = f" ({check['f1_float32']:.2f} in float32)" if "f1_float32" in check else ""
    print(f"check: dev F1 {check['f1']:.2f}{also} on the first {check['sentences']} sentences (recorded in the card)")
    return 0
