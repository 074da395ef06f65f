"""``python -m lisa_tf export``."""

HELP = "export a trained run as a float32 SavedModel (TF-Serving layout DIR/NAME/VERSION)"


def add_arguments(parser):
    parser.add_argument("--run", required=True, help="run directory")
    parser.add_argument("--out", required=True, help="export directory, e.g. exports/srl/1")
    parser.add_argument("--weights", default="best", help="best (default), final, or a weights file")


def run(args) -> int:
    from export.saved_model import export_run

    path = export_run(args.run, args.out, args.weights)
    print(f"SavedModel written to {path}")
    return 0
