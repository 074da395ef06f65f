"""``python -m lisa_tf label-corpus``: label text files of any size with an Apache Beam pipeline.

Runs locally (``--runner DirectRunner``, the default; ``--direct_num_workers 2
--direct_running_mode multi_processing`` for two worker processes) or on a cluster with Beam's own
flags (``--runner FlinkRunner --flink_master HOST:PORT``, ``--runner DataflowRunner --project P
--region R --temp_location gs://…``): every option this command does not define is a Beam pipeline
option. The steps, outputs and counters: :mod:`lisa_tf.labelling.corpus`.
"""

HELP = "label text files of any size with an Apache Beam pipeline: sharded JSONL frames and dead letters"
#: Options this command does not define are Beam's pipeline options.
PASSTHROUGH = "pipeline_args"
#: The model is loaded by the workers (lisa_tf.labelling.corpus.LabelBlock), which import TensorFlow
#: themselves: the command's own checks come first, in seconds.
TENSORFLOW = False

from data_pipeline.errors import UserError  # noqa: E402
from lisa_tf_cli.commands._text_input import positive_int  # noqa: E402


def add_arguments(parser):
    parser.add_argument("--input", required=True, metavar="PATTERN",
                        help="files to label (a glob; any Beam file system, e.g. gs://bucket/news/*.txt); one "
                             "paragraph per line as predict --input (.gz and .bz2 are decompressed)")
    parser.add_argument("--output", required=True, metavar="PREFIX",
                        help="writes PREFIX-SSSSS-of-NNNNN.jsonl (one predict --format jsonl record per sentence, "
                             "with its \"source\" file; blank lines are counted, not written) and "
                             "PREFIX-dead-letters-SSSSS-of-NNNNN.jsonl; files of this name are never read as input")
    parser.add_argument("--model", default="srl",
                        help="a shipped model's name (default: srl), a packaged model, run directory, .keras file or "
                             "export, readable where the workers run")
    parser.add_argument("--runner", default="DirectRunner",
                        help="Beam runner: DirectRunner (default), PrismRunner, FlinkRunner, SparkRunner, DataflowRunner")
    parser.add_argument("--tokenized", action="store_true", help="input lines are sentences of space-separated tokens")
    parser.add_argument("--predicates", choices=("all", "verbal"), default="all",
                        help="all (default): every predicate the model finds; verbal: verb frames only (as predict)")
    parser.add_argument("--shard-bytes", type=positive_int, default=1 << 20,
                        help="bytes of input text (decompressed) per output shard, cut at a line end (default "
                             "1048576): a shard is labelled and written by one worker, as its records come")
    parser.add_argument("--batch-tokens", type=positive_int, default=4096, help="most tokens per model batch")
    parser.add_argument("--max-sentence-tokens", type=positive_int, default=None,
                        help="longest sentence to label (default: the model's longest training sentence, as predict "
                             "and serve); longer ones are dead letters")
    parser.add_argument("--frames", help="your own PropBank frame index, merged over the shipped one (as predict "
                                         "--frames), readable where the workers run; models with a sense head only")


def _pipeline_options(runner: str, flags: list):
    """Beam's options from ``flags``; an unknown flag is refused (Beam itself would only warn)."""
    from apache_beam.options.pipeline_options import PipelineOptions

    # the workers' own INFO lines (harness start and stop) are not the user's; a flag given wins
    options = PipelineOptions([f"--runner={runner}", "--default_sdk_harness_log_level=WARNING", *flags])
    known = options.get_all_options(retain_unknown_options=True, drop_default=False)
    parsed = options.get_all_options(drop_default=False)
    unknown = sorted(set(known) - set(parsed))
    if unknown:
        raise UserError(f"unrecognized arguments: {' '.join('--' + name for name in unknown)} (neither label-corpus's "
                        "options nor Beam pipeline options)")
    return options


def check_output(prefix: str) -> None:
    """Refuse an ``--output`` prefix whose files cannot be written (a local path: a file where a
    directory is needed, a directory that cannot be created or written, or a prefix that names a
    directory), in plain Python before Beam or TensorFlow is imported: a pipeline that cannot write
    fails only once its workers have loaded the model. Permissions alone do not tell (root passes
    every check of them, and ``/proc`` refuses new directories to root too), so the output directory
    is made and a temporary file written in it; the directories made for this are removed again (the
    pipeline makes them when it writes), so a command refused later leaves nothing behind. Another file
    system's path (``gs://``, …) is left to Beam."""
    import os
    import tempfile

    if "://" in prefix:
        return
    if prefix.endswith(("/", os.sep)) or os.path.isdir(prefix):
        raise UserError(f"--output {prefix}: a directory; expected a prefix for the output files in it, e.g. "
                        f"{os.path.join(prefix, 'frames')}")
    target = os.path.dirname(os.path.abspath(prefix))
    directory, missing = target, []
    while not os.path.exists(directory):  # created by the pipeline; what exists must be a directory
        missing.append(directory)
        directory = os.path.dirname(directory)
    if not os.path.isdir(directory):
        raise UserError(f"--output {prefix}: {directory} is a file, not a directory; expected a prefix under a "
                        "directory that exists or can be created")
    try:
        os.makedirs(target, exist_ok=True)
    except OSError as error:
        raise UserError(f"--output {prefix}: cannot create {target} ({error.strerror or error}); expected a prefix "
                        "under a directory that exists or can be created") from None
    try:
        with tempfile.TemporaryFile(dir=target):
            pass
    except OSError as error:
        raise UserError(f"--output {prefix}: cannot write in {target} ({error.strerror or error}); expected a "
                        "writable directory") from None
    finally:
        for made in missing:  # deepest first
            try:
                os.rmdir(made)
            except OSError:
                pass


def check_input(pattern: str) -> None:
    """Refuse an ``--input`` pattern that matches no file, before Beam is imported (a local path; another
    file system's is left to Beam). Beam's local matching is followed: a pattern ending in ``/`` means
    the files under it, the files under the directory part of the pattern are walked (symbolic links to
    directories not followed), and a pattern without a directory matches nothing. ``*`` here also
    crosses ``/`` (Beam's only with ``**``), so a pattern refused here is one Beam cannot match either."""
    import fnmatch
    import os
    import re

    if "://" in pattern:
        return
    nothing = f"--input {pattern}: no file matches"
    expected = "expected a file or a glob of text files"
    glob = pattern + "*" if pattern.endswith(("/", os.sep)) else pattern
    fixed = re.match(r"[^[*?]*", glob).group(0)
    if fixed == glob:
        if not os.path.exists(glob):
            raise UserError(f"{nothing}; {expected}")
        return
    top = os.path.dirname(fixed)
    if not top:
        raise UserError(f"{nothing} (a pattern without a directory matches nothing: give one, e.g. "
                        f"{os.path.join('.', glob)}); {expected}")
    matches = re.compile(fnmatch.translate(glob)).match
    if not any(matches(os.path.join(root, name)) for root, _, names in os.walk(top) for name in names):
        raise UserError(f"{nothing}; {expected}")


def _model(args):
    """The model ``--model`` names, or a UserError naming the flag."""
    from lisa_tf.packages.finding import model_path

    try:
        return model_path(args.model, "srl")
    except FileNotFoundError as error:
        raise UserError(f"--model {error}; expected a shipped model's name, a packaged model, run directory, .keras "
                        "file or export") from None


def check(args) -> None:
    """Before Beam and TensorFlow are imported (seconds): the ``--output`` prefix, the ``--frames``
    index, the ``--model`` and the ``--input`` pattern (a UserError naming the first wrong one)."""
    from lisa_tf_cli.commands._frame_index import check_frame_index

    check_output(args.output)
    # read and checked whole here: the workers would read it only at their first sense
    check_frame_index(args.frames, "--frames")
    _model(args)
    check_input(args.input)


def run(args) -> int:
    import sys
    import time

    from lisa_tf_cli.commands._frame_index import check_frame_index

    frames = check_frame_index(args.frames, "--frames")  # read by check() already: once per process
    from data_pipeline.input_limits import model_max_tokens_per_sentence
    # first: it quiets Beam's import-time warnings
    from lisa_tf.labelling.corpus import (COUNTERS, FileSystems, LabelBlock, beam, build_pipeline, counter_values,
                                          is_output, shard_path)
    from lisa_tf.util.native_logs import BEAM_WORKER_NOISE, filtered_stderr

    model = _model(args)
    try:
        matched = FileSystems.match([args.input])[0].metadata_list
    except Exception as error:  # noqa: BLE001 - Beam's file systems raise their own kinds
        raise UserError(f"--input {args.input}: {error}") from None
    if not matched:
        raise UserError(f"--input {args.input}: no file matches; expected a file or a glob of text files")
    if all(is_output(m.path, args.output) for m in matched):
        raise UserError(f"--input {args.input}: matches only the output files of --output {args.output} (never read "
                        "as input); expected text files")
    limit = args.max_sentence_tokens or model_max_tokens_per_sentence(model)
    options = _pipeline_options(args.runner, list(getattr(args, PASSTHROUGH, None) or []))
    labeller = LabelBlock(args.output, str(model.resolve()), args.batch_tokens, limit, args.predicates, args.tokenized,
                          frames=str(frames.resolve()) if frames else None)
    print(f"labelling {args.input} with {model} on the {args.runner} -> {args.output}-*.jsonl", file=sys.stderr)
    started = time.perf_counter()
    pipeline = beam.Pipeline(options=options)
    build_pipeline(pipeline, args.input, labeller, args.shard_bytes)
    with filtered_stderr(BEAM_WORKER_NOISE):  # local workers write to this process's standard error
        result = pipeline.run()
        result.wait_until_finish()
    seconds = time.perf_counter() - started
    counts = counter_values(result)
    width = max(map(len, COUNTERS))
    for name in COUNTERS:
        print(f"  {name.replace('_', ' '):<{width}}  {counts[name]:>10,}", file=sys.stderr)
    print(f"{counts['tokens'] / seconds if seconds else 0:.0f} tokens/s in {seconds:.1f} s; records: "
          f"{shard_path(args.output, 0, 0).replace('-00000-of-00000', '-*-of-*')}, dead letters: "
          f"{shard_path(args.output + '-dead-letters', 0, 0).replace('-00000-of-00000', '-*-of-*')}; blank lines "
          "are counted (empty), not written", file=sys.stderr)
    return 2 if counts["dead_letters"] else 0
