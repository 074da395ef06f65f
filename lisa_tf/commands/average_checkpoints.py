"""``python -m lisa_tf average-checkpoints --run RUN [--last N | --weights F …] [--out FILE]``."""

HELP = "average the weights of a run's latest checkpoints into one weights file (use it with evaluate/export --weights)"


def add_arguments(parser):
    parser.add_argument("--run", required=True, help="run directory")
    parser.add_argument("--last", type=int, default=5, help="average the latest N kept checkpoints (default 5)")
    parser.add_argument("--weights", nargs="+", help="average these weight files instead")
    parser.add_argument("--out", help="output weights file (default RUN/averaged.weights.h5)")


def run(args) -> int:
    import pathlib

    from lisa_tf.training.averaging import average_weights, checkpoint_files

    files = args.weights or checkpoint_files(args.run, args.last)
    out = args.out or pathlib.Path(args.run) / "averaged.weights.h5"
    average_weights(args.run, files, out)
    print(f"averaged {len(files)} checkpoints: {', '.join(str(f) for f in files)}")
    print(f"wrote {out}; evaluate it with: python -m lisa_tf evaluate --run {args.run} --weights {out} --data …")
    return 0
