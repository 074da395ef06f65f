"""``python -m lisa_tf train``."""

HELP = "train a model (resumes when --out already holds a run)"


def add_arguments(parser):
    parser.add_argument("--config", help="configs/*.toml|json; optional when resuming (the run's config.json is used) "
                                         "and with --init (the model's own)")
    parser.add_argument("--init", metavar="MODEL",
                        help="start from a trained model (a shipped model's name such as srl, a package, a run, or a "
                             ".keras file with --config): its settings, with fewer steps and a lower learning rate for "
                             "a few hundred sentences; vocabularies grow by the new data (train.init)")
    parser.add_argument("--out", required=True, help="run directory")
    parser.add_argument("overrides", nargs="*", metavar="section.key=value", help="e.g. train.max_steps=200 model.num_layers=4")
    parser.add_argument("--verbose", type=int, choices=(0, 1, 2), default=None, help="progress: 0 evaluations only, 1 one line redrawn (default on a terminal), 2 a plain line every 30 s")


def check(args) -> None:
    """Before TensorFlow is imported: the model ``--init`` names, when it starts a new run (a run
    being resumed goes on from its own weights), so a mistyped name is reported before the seconds
    TensorFlow takes to load; the config is checked in full by :func:`checked_config`."""
    import pathlib

    if args.init and not (pathlib.Path(args.out) / "config.json").exists():
        from lisa_tf.training.init_from_model import init_path

        init_path(args.init)


def checked_config(config_path, overrides, out, init=None):
    """The experiment to train in ``out``, checked in full before anything is read or written: the
    config (:func:`~lisa_tf.config.validate_config`), and when ``out`` already holds a run, that the
    run has the same model. A new run from ``init`` without ``data.dev`` (in the overrides or
    ``config_path``) keeps the model's own dev data, which picks its best weights: a line says so.

    Raises:
        UserError: no ``--config`` for a new run, an invalid config, ``out`` not a directory, or a run
            of another model in ``out``, or ``out`` cannot be created or written (it is created last).
    """
    import pathlib
    import tempfile

    from data_pipeline.errors import UserError
    from lisa_tf.config import load_config, validate_config
    from lisa_tf.models.runs import RunError, check_same_model

    out = pathlib.Path(out)
    if out.exists() and not out.is_dir():
        raise RunError(f"--out {out}: exists and is not a directory; give a new or an existing run directory")
    saved = out / "config.json"
    if init and not saved.exists():  # a new run from a model: its settings, adapted, then the overrides
        from lisa_tf.training.init_from_model import adaptation_overrides, init_path, recorded_config

        model = init_path(init)
        base = config_path or recorded_config(model)
        if base is None:
            raise UserError(f"--init {init}: a .keras file records no settings; give --config with its model's settings")
        own_dev = config_path is not None or any(o.startswith("data.dev=") for o in overrides)
        overrides = adaptation_overrides(model) + [f"train.init={init}"] + list(overrides)
        config = load_config(base, overrides)
        if not own_dev:  # the model's own dev data picks the best weights: say so before the run starts
            print(f"note: --init {init} without data.dev: the best weights are picked on the model's own dev data, "
                  f"{config.data.dev}, not on yours; give data.dev=FILE to pick them on your data", flush=True)
    elif config_path:
        config = load_config(config_path, overrides)
    elif saved.exists():
        config = load_config(saved, overrides)
    else:
        raise UserError(f"--config is required for a new run ({saved} does not exist)")
    validate_config(config)
    check_same_model(config, out)
    if init and not saved.exists():  # a model of other settings is refused before the run directory is made
        from lisa_tf.training.init_from_model import check_same_settings

        check_same_settings(config, model)
    created = not out.exists()
    try:  # last: a config refused above leaves nothing behind
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out):
            pass
    except OSError as error:
        raise RunError(f"--out {out}: cannot be written ({error.strerror or error}); expected a run directory in a "
                       "writable location") from None
    if created:  # the run makes it when it starts: data refused on reading leaves nothing behind either
        out.rmdir()
    return config


def run(args) -> int:
    import json

    config = checked_config(args.config, args.overrides, args.out, args.init)

    from lisa_tf.training.loop import train

    train(config, args.out, verbose=args.verbose)  # its last line names the run, best dev F1 and wall time
    return 0
