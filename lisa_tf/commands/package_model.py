"""``python -m lisa_tf package-model``: the shipped models and their model cards (:mod:`lisa_tf.packaging`)."""

HELP = "package an experiment's SRL model and D&M parser into models/ with their model cards"


def add_arguments(parser):
    from lisa_tf.packaging import ROOT, SHIPPED

    parser.add_argument("--results", default=str(ROOT / "results" / "open"),
                        help="output directory of ./run_experiments.sh open (default results/open)")
    parser.add_argument("--model", default="lisa", choices=("lisa", "sa"), help="the SRL model to ship (default lisa)")
    parser.add_argument("--out", default=str(SHIPPED), help="where the packages go (default models/)")


def run(args) -> int:
    from lisa_tf.packaging import package_models

    cards = package_models(args.results, args.out, args.model)
    for kind, card in cards.items():
        files = card["files"]
        print(f"{kind}: {card['name']} -> {args.out}/{kind} (export {files['export_bytes'] / 2 ** 20:.1f} MB, "
              f".keras {files['keras_bytes'] / 2 ** 20:.1f} MB)")
    print(f"check: dev F1 {cards['srl']['check']['f1']:.2f} on the first {cards['srl']['check']['sentences']} "
          "sentences (recorded in the card)")
    return 0
