"""``python -m lisa_tf train``."""

HELP = "train a model (resumes when --out already holds a run)"


def add_arguments(parser):
    parser.add_argument("--config", help="configs/*.toml|json; optional when resuming (the run's config.json is used)")
    parser.add_argument("--out", required=True, help="run directory")
    parser.add_argument("overrides", nargs="*", metavar="section.key=value", help="e.g. train.max_steps=200 model.num_layers=4")
    parser.add_argument("--verbose", type=int, choices=(0, 1, 2), default=None, help="progress: 0 evaluations only, 1 one line redrawn (default on a terminal), 2 a plain line every 30 s")


def run(args) -> int:
    import pathlib

    from lisa_tf.config import load_config

    saved = pathlib.Path(args.out) / "config.json"
    if args.config:
        config = load_config(args.config, args.overrides)
    elif saved.exists():
        config = load_config(saved, args.overrides)
    else:
        raise SystemExit(f"error: --config is required for a new run ({saved} does not exist)")

    from lisa_tf.training.loop import train

    train(config, args.out, verbose=args.verbose)  # its last line names the run, best dev F1 and wall time
    return 0
