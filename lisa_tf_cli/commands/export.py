"""``python -m lisa_tf export``."""

HELP = "export a trained run or a packaged model as a float32 SavedModel (TF-Serving layout DIR/NAME/VERSION)"


def add_arguments(parser):
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--run", help="run directory")
    source.add_argument("--model", help="packaged model: models/NAME, or a shipped model's name (srl, parser, ...)")
    parser.add_argument("--out", required=True,
                        help="export directory, new or empty, e.g. exports/srl/1 (a new model is a new version)")
    parser.add_argument("--weights", default="best", help="with --run: best (default), final, or a weights file")
    parser.add_argument("--no-constraints", dest="constraints", action="store_false",
                        help="decode with the plain BIO Viterbi instead of the frame constraints (default: at most one "
                             "of each core role, C-/R- after their role, only the predicted roleset's core roles)")
    parser.add_argument("--allow-untrained", action="store_true",
                        help="export a run that has no trained weights yet (its initial model), with a warning")
    parser.add_argument("--frames", help="your own PropBank frame index, merged over the shipped one into the export: "
                                         "its meanings win, its lemmas' rolesets become senses of their words "
                                         "(models with a sense head only)")


def _package(args):
    """The packaged model ``--model`` names, or a PackagingError naming the flag."""
    from lisa_tf.packages.finding import PackagingError, is_package, model_path

    try:
        package = model_path(args.model, flag="--model")
    except FileNotFoundError as error:
        raise PackagingError(f"--model {error}") from None
    if not is_package(package):
        raise PackagingError(f"--model {package}: not a packaged model (model.keras beside card.json); "
                             "export a run directory with --run")
    return package


def check(args) -> None:
    """Before TensorFlow is imported: the packaged model ``--model`` names, and the ``--frames`` index,
    read and checked whole (a UserError naming the flag, and what was expected; for the index, where
    in it), so a mistyped name is reported before the model loads."""
    from lisa_tf_cli.commands._frame_index import check_frame_index

    if args.model is not None:
        _package(args)
    check_frame_index(args.frames, "--frames")


def run(args) -> int:
    import sys

    from export.saved_model import check_export_dir, export_package, export_run
    from lisa_tf.decoding.frame_meanings import check_frames
    from lisa_tf.models.runs import UNTRAINED, RunError, has_trained_weights, require_run

    check_frames(args.frames, "--frames")

    if args.model is not None:
        package = _package(args)
        check_export_dir(args.out)
        print(f"SavedModel written to {export_package(package, args.out, args.frames, args.constraints)}")
        return 0
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
    path = export_run(run_dir, args.out, weights, frames=args.frames, constraints=args.constraints)
    print(f"SavedModel written to {path}")
    return 0
