"""``python -m lisa_tf label-corpus``: label text files of any size with an Apache Beam pipeline.

Runs locally (``--runner DirectRunner``, the default; ``--direct_num_workers 2
--direct_running_mode multi_processing`` for two worker processes) or on a cluster with Beam's own
flags (``--runner FlinkRunner --flink_master HOST:PORT``, ``--runner DataflowRunner --project P
--region R --temp_location gs://…``): every option this command does not define is a Beam pipeline
option. The steps, outputs and counters: :mod:`lisa_tf.corpus_labelling`.
"""

HELP = "label text files of any size with an Apache Beam pipeline: sharded JSONL frames and dead letters"
#: Options this command does not define are Beam's pipeline options.
PASSTHROUGH = "pipeline_args"

from data_pipeline.errors import UserError  # noqa: E402
from lisa_tf.commands._text_input import positive_int  # noqa: E402


def add_arguments(parser):
    parser.add_argument("--input", required=True, metavar="PATTERN",
                        help="files to label (a glob; any Beam file system, e.g. gs://bucket/news/*.txt); one "
                             "paragraph per line as predict --input (.gz and .bz2 are decompressed)")
    parser.add_argument("--output", required=True, metavar="PREFIX",
                        help="writes PREFIX-SSSSS-of-NNNNN.jsonl (one predict --format jsonl record per sentence, "
                             "with its \"source\" file) and PREFIX-dead-letters-00000-of-00001.jsonl")
    parser.add_argument("--model", default="srl",
                        help="a shipped model's name (default: srl), a packaged model, run directory, .keras file or "
                             "export, readable where the workers run")
    parser.add_argument("--runner", default="DirectRunner",
                        help="Beam runner: DirectRunner (default), PrismRunner, FlinkRunner, SparkRunner, DataflowRunner")
    parser.add_argument("--tokenized", action="store_true", help="input lines are sentences of space-separated tokens")
    parser.add_argument("--predicates", choices=("all", "verbal"), default="all",
                        help="all (default): every predicate the model finds; verbal: verb frames only (as predict)")
    parser.add_argument("--num-shards", type=positive_int, default=4,
                        help="output shards (default 4); a shard's records are sorted in one worker's memory, so "
                             "give a large corpus more shards")
    parser.add_argument("--batch-tokens", type=positive_int, default=4096, help="most tokens per model batch")
    parser.add_argument("--max-sentence-tokens", type=positive_int, default=None,
                        help="longest sentence to label (default: the model's longest training sentence, as predict "
                             "and serve); longer ones are dead letters")


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


def run(args) -> int:
    import sys
    import time

    from data_pipeline.input_limits import model_max_tokens_per_sentence
    # first: it quiets Beam's import-time warnings
    from lisa_tf.corpus_labelling import (COUNTERS, FileSystems, SentenceLabeller, beam, build_pipeline, counter_values,
                                          shard_path)
    from lisa_tf.native_logs import BEAM_WORKER_NOISE, filtered_stderr
    from lisa_tf.packaging import model_path

    try:
        model = model_path(args.model, "srl")
    except FileNotFoundError as error:
        raise UserError(f"--model {error}; expected a shipped model's name, a packaged model, run directory, .keras "
                        "file or export") from None
    try:
        matched = FileSystems.match([args.input])[0].metadata_list
    except Exception as error:  # noqa: BLE001 - Beam's file systems raise their own kinds
        raise UserError(f"--input {args.input}: {error}") from None
    if not matched:
        raise UserError(f"--input {args.input}: no file matches; expected a file or a glob of text files")
    limit = args.max_sentence_tokens or model_max_tokens_per_sentence(model)
    options = _pipeline_options(args.runner, list(getattr(args, PASSTHROUGH, None) or []))
    handler = SentenceLabeller(str(model.resolve()), args.batch_tokens, limit, args.predicates)
    print(f"labelling {args.input} with {model} on the {args.runner} -> {args.output}-*.jsonl", file=sys.stderr)
    started = time.perf_counter()
    pipeline = beam.Pipeline(options=options)
    build_pipeline(pipeline, args.input, args.output, handler, args.num_shards, args.tokenized)
    with filtered_stderr(BEAM_WORKER_NOISE):  # local workers write to this process's standard error
        result = pipeline.run()
        result.wait_until_finish()
    seconds = time.perf_counter() - started
    counts = counter_values(result)
    width = max(map(len, COUNTERS))
    for name in COUNTERS:
        print(f"  {name.replace('_', ' '):<{width}}  {counts[name]:>10,}", file=sys.stderr)
    print(f"{counts['tokens'] / seconds if seconds else 0:.0f} tokens/s in {seconds:.1f} s; records: "
          f"{shard_path(args.output, 0, args.num_shards).replace('-00000-', '-*-')}, dead letters: "
          f"{shard_path(args.output + '-dead-letters', 0, 1)}", file=sys.stderr)
    return 2 if counts["dead_letters"] else 0
