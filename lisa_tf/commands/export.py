"""``python -m lisa_tf export``."""

HELP = "export a trained run as a float32 SavedModel (TF-Serving layout DIR/NAME/VERSION)"


def add_arguments(parser):
    parser.add_argument("--run", required=True, help="run directory")
    parser.add_argument("--out", required=True,
                        help="export directory, new or empty, e.g. exports/srl/1 (a new model is a new version)")
    parser.add_argument("--weights", default="best", help="best (default), final, or a weights file")
    parser.add_argument("--allow-untrained", action="store_true",
                        help="export a run that has no trained weights yet (its initial model), with a warning")


def run(args) -> int:
    import sys

    from export.saved_model import check_export_dir, export_run
    from lisa_tf.runs import UNTRAINED, RunError, has_trained_weights, require_run

    run_dir = require_run(args.run)
    check_export_dir(args.out)
    weights = args.weights
    if weights in ("best", "final") and not has_trained_weights(run_dir):
        if not args.allow_untrained:
            raise RunError(f"--run {run_dir}: {UNTRAINED}; train it (python -m lisa_tf train --out {run_dir}), "
                           "or give --allow-untrained to export its untrained model")
        print(f"warning: --run {run_dir}: {UNTRAINED}; exporting its untrained model (--allow-untrained)",
              file=sys.stderr)
        weights = "model"
    path = export_run(run_dir, args.out, weights)
    print(f"SavedModel written to {path}")
    return 0
