"""``python -m lisa_tf parse``: dependency-parse text with a trained parser run (Chu-Liu-Edmonds trees)
or its SavedModel export (Eisner's projective trees, decoded in-graph), writing CoNLL-U."""

from data_pipeline.errors import UserError
from data_pipeline.text_lines import text_lines
from lisa_tf_cli.commands._text_input import check_creatable, check_model, check_readable, positive_int

HELP = "dependency-parse raw text, tokenised lines or the words of a CoNLL file with a parser run (CoNLL-U out)"

#: Sentences parsed per model call; input is read lazily, so memory stays bounded on any file size.
CHUNK = 512
#: ``--format`` guessed from the input file's name when not given.
SUFFIXES = {".conllu": "conllu", ".gold_conll": "conll12", ".gold_skel": "conll12"}


class ParseInputError(UserError):
    """The input to ``parse`` cannot be read: names the path and what was expected."""


def add_arguments(parser):
    parser.add_argument("model", nargs="?", default=None,
                        help="run directory of a parser (model.kind = parser), its .keras file, a version directory "
                             "of its SavedModel export (e.g. exports/parser/1) or a package (default: the shipped "
                             "parser, models/parser); an export runs its graph when loaded: give only models you trust")
    parser.add_argument("--input", required=True,
                        help="text file (one paragraph per line, or with --tokenized one sentence per line), "
                             "a CoNLL file (its words are parsed), or - for standard input")
    parser.add_argument("--tokenized", action="store_true", help="input lines are sentences of space-separated tokens")
    parser.add_argument("--format", choices=("text", "conllu", "conll12", "conll05", "lisa"),
                        help="input format; default: from the file name (.conllu, .gold_conll[.gz]), else text")
    parser.add_argument("--out", help="write the CoNLL-U here instead of standard output")
    parser.add_argument("--greedy", action="store_true",
                        help="each token's best head instead of the maximum spanning tree (may not be a tree; a run only)")
    parser.add_argument("--batch-tokens", type=positive_int, default=4096, help="most padded tokens per batch")
    parser.add_argument("--max-sentence-tokens", type=positive_int, default=None,
                        help="longest sentence to parse (default: the model's longest training sentence; else 512); "
                             "longer ones are skipped, reported and counted")


def _input_format(args) -> str:
    if args.format:
        return args.format
    name = args.input[:-3] if args.input.endswith(".gz") else args.input
    for suffix, fmt in SUFFIXES.items():
        if name.endswith(suffix):
            return fmt
    return "text"


def check(args) -> None:
    """Before TensorFlow is imported: the model (``[MODEL]``, else the shipped parser), the ``--input``
    file (a CoNLL format needs a path, not standard input) and the ``--out`` path (a UserError naming
    the first wrong one), so a mistyped name is reported before the model loads."""
    import os

    check_model(args.model, "parser", "MODEL")
    fmt = _input_format(args)
    if args.input == "-" and fmt != "text":
        raise ParseInputError(f"--format {fmt}: give the CoNLL file's path, not standard input")
    if args.input != "-" and not os.path.exists(args.input):
        raise ParseInputError(f"--input {args.input}: no such file; expected a text file, a CoNLL file or - for "
                              "standard input")
    check_readable(args.input, "--input")
    check_creatable(args.out, "--out")


def _sentences(args, limit: int):
    """``(source, words or None, why it is skipped or None)`` per sentence of the input, read lazily
    (text) or from the CoNLL file's sentences; ``source`` names it for messages (``FILE:LINE``); a line
    with a run no sentence of ``limit`` tokens holds is skipped before it is tokenised."""
    import sys

    from data_pipeline.readers import read_sentences
    from data_pipeline.tokenizer import sentences as split_and_tokenize
    from data_pipeline.input_limits import MAX_PARAGRAPH_CHARACTERS, run_too_long

    fmt = _input_format(args)
    if fmt != "text":
        if args.input == "-":
            raise ParseInputError(f"--format {fmt}: give the CoNLL file's path, not standard input")
        for sentence in read_sentences(args.input, fmt):
            yield f"{args.input}:{sentence.line}", list(sentence.words), None
        return
    name = "<stdin>" if args.input == "-" else args.input
    handle = sys.stdin.buffer if args.input == "-" else open(args.input, "rb")
    with handle:
        for number, line, skipped in text_lines(handle, MAX_PARAGRAPH_CHARACTERS):
            source = f"{name}:{number}"
            skipped = skipped or (None if args.tokenized else run_too_long(line, limit))
            if skipped:
                yield source, None, skipped
            elif args.tokenized:
                yield source, line.split(), None
            else:
                for tokens in split_and_tokenize(line):
                    if tokens:
                        yield source, [t.text for t in tokens], None


def _load_parser(path):
    """The parser model of a run or .keras file, or the ``serving_default`` function of its export."""
    import pathlib

    from lisa_tf.models import DependencyParser
    from lisa_tf.models.runs import MODEL_FILE, RunError, load_model_file, load_run
    from lisa_tf.packages.finding import KERAS_FILE, is_package, model_path

    path = model_path(path, "parser", "MODEL")
    if is_package(path):  # its export when serve or export has built it (lisa_tf.packages.export_cache)
        from lisa_tf.packages.export_cache import cached_export

        path = cached_export(path) or path / KERAS_FILE
    if (path / "saved_model.pb").exists():
        from export.model_versions import load_version

        signature = load_version(0, path, warmup=False).signatures.get("serving_default")
        if signature is None or "heads" not in signature.outputs or set(signature.inputs) != {"tokens"}:
            raise RunError(f"{path}: a SavedModel that is not a dependency parser's export (expected a serving_default "
                           "signature taking only tokens and answering heads)")
        return signature.function
    if path.is_file() and path.suffix == ".keras":
        model = load_model_file(path)
    elif (path / MODEL_FILE).exists():
        model = load_run(path)
    else:
        raise RunError(f"{path}: not a run directory ({MODEL_FILE}), a .keras file or a SavedModel export (saved_model.pb)")
    if not isinstance(model, DependencyParser):
        raise RunError(f"{path}: a {type(model).__name__} model, not a dependency parser (model.kind = parser)")
    return model


def run(args) -> int:
    import itertools
    import sys
    import time

    from data_pipeline.input_limits import model_max_tokens_per_sentence, sentence_too_long
    from data_pipeline.sentence import Sentence
    from lisa_tf.labelling.parse import conllu_lines, parse_sentences, parse_with_export
    from lisa_tf.models import DependencyParser
    from lisa_tf.packages.finding import default_model

    model = _load_parser(args.model)
    limit = args.max_sentence_tokens or model_max_tokens_per_sentence(args.model or default_model("parser", "MODEL"))
    if isinstance(model, DependencyParser):
        def parse(chunk):
            return parse_sentences(model, chunk, token_budget=args.batch_tokens, tree=not args.greedy)
    elif args.greedy:
        raise ParseInputError(f"--greedy: {args.model} is an export, which always decodes trees; give the run instead")
    else:
        def parse(chunk):
            return parse_with_export(model, chunk, token_budget=args.batch_tokens)
    try:
        out = open(args.out, "w", encoding="utf-8") if args.out else sys.stdout
    except OSError as error:
        raise ParseInputError(f"--out {args.out}: {error.strerror}; expected a writable file path") from None
    sentences = tokens = skipped = 0
    started = time.perf_counter()
    try:
        units = _sentences(args, limit)
        while True:
            read = list(itertools.islice(units, CHUNK))
            if not read:
                break
            chunk = []
            for source, words, reason in read:
                reason = reason or sentence_too_long(len(words), limit)
                if reason:  # reported and counted, not written
                    skipped += 1
                    print(f"warning: {source}: {reason}; skipped", file=sys.stderr)
                else:
                    chunk.append(Sentence(words=words))
            if not chunk:
                continue
            parsed = parse(chunk)
            out.write("\n".join(conllu_lines(parsed)) + "\n")
            out.flush()  # what is parsed is on disk, whatever happens to the lines after it
            sentences += len(chunk)
            tokens += sum(len(s) for s in chunk)
    finally:
        if args.out:
            out.close()
    seconds = time.perf_counter() - started
    rate = sentences / seconds if seconds > 0 else 0.0
    print(f"parsed {sentences} sentences ({tokens} tokens) in {seconds:.1f} s: {rate:.1f} sentences/s; "
          f"{skipped} skipped", file=sys.stderr)
    return 2 if skipped else 0
