"""``python -m lisa_tf average-checkpoints --run RUN [--last N | --weights F …] [--out FILE]``."""

HELP = "average the weights of a run's latest checkpoints into one weights file (use it with evaluate/export --weights)"


def add_arguments(parser):
    from lisa_tf_cli.commands.serve import _positive

    parser.add_argument("--run", required=True, help="run directory")
    parser.add_argument("--last", type=_positive, default=5, help="average the latest N kept checkpoints (default 5)")
    parser.add_argument("--weights", nargs="+", help="average these weight files instead")
    parser.add_argument("--out", help="output weights file (default RUN/averaged.weights.h5)")


def run(args) -> int:
    import pathlib

    from lisa_tf.models.runs import RunError, require_run, weights_file
    from lisa_tf.training.averaging import average_weights, checkpoint_files
    from lisa_tf.training.callbacks import step_weight_files

    run_dir = require_run(args.run)
    if args.weights:
        files = [weights_file(run_dir, w) for w in args.weights]
    else:
        kept = step_weight_files(run_dir / "weights")
        if not kept:
            raise RunError(f"--run {run_dir}: no step-N.weights.h5 checkpoints in {run_dir / 'weights'}; training "
                           "keeps them at each evaluation when train.keep_weights > 0")
        if len(kept) < args.last:
            raise RunError(f"--last {args.last}: {run_dir / 'weights'} holds {len(kept)} step-N.weights.h5 "
                           f"checkpoint(s); give --last {len(kept)} or fewer")
        files = checkpoint_files(run_dir, args.last)
    out = args.out or run_dir / "averaged.weights.h5"
    average_weights(run_dir, files, out)
    print(f"averaged {len(files)} checkpoints: {', '.join(str(f) for f in files)}")
    print(f"wrote {out}; evaluate it with: python -m lisa_tf evaluate --run {args.run} --weights {out} --data …")
    return 0
