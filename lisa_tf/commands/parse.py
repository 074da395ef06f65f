"""``python -m lisa_tf parse``: dependency-parse text with a trained parser run (Chu-Liu-Edmonds trees)
or its SavedModel export (Eisner's projective trees, decoded in-graph), writing CoNLL-U."""

from data_pipeline.errors import UserError

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
                             "parser, models/parser)")
    parser.add_argument("--input", required=True,
                        help="text file (one paragraph per line, or with --tokenized one sentence per line), "
                             "a CoNLL file (its words are parsed), or - for standard input")
    parser.add_argument("--tokenized", action="store_true", help="input lines are sentences of space-separated tokens")
    parser.add_argument("--format", choices=("text", "conllu", "conll12", "conll05", "lisa"),
                        help="input format; default: from the file name (.conllu, .gold_conll[.gz]), else text")
    parser.add_argument("--out", help="write the CoNLL-U here instead of standard output")
    parser.add_argument("--greedy", action="store_true",
                        help="each token's best head instead of the maximum spanning tree (may not be a tree; a run only)")
    parser.add_argument("--batch-tokens", type=int, default=4096, help="most padded tokens per batch")


def _input_format(args) -> str:
    if args.format:
        return args.format
    name = args.input[:-3] if args.input.endswith(".gz") else args.input
    for suffix, fmt in SUFFIXES.items():
        if name.endswith(suffix):
            return fmt
    return "text"


def _sentences(args):
    """Word lists of the input, read lazily (text) or from the CoNLL file's sentences."""
    import sys

    from data_pipeline.readers import read_sentences
    from data_pipeline.tokenizer import sentences as split_and_tokenize

    fmt = _input_format(args)
    if fmt != "text":
        if args.input == "-":
            raise ParseInputError(f"--format {fmt}: give the CoNLL file's path, not standard input")
        for sentence in read_sentences(args.input, fmt):
            yield list(sentence.words)
        return
    handle = sys.stdin if args.input == "-" else open(args.input, encoding="utf-8")
    with handle:
        for line in handle:
            line = line.strip()
            if not line:
                continue
            if args.tokenized:
                yield line.split()
            else:
                for tokens in split_and_tokenize(line):
                    if tokens:
                        yield [t.text for t in tokens]


def _load_parser(path):
    """The parser model of a run or .keras file, or the ``serving_default`` function of its export."""
    import pathlib

    from lisa_tf.models import DependencyParser
    from lisa_tf.packaging import KERAS_FILE, default_model, is_package
    from lisa_tf.runs import MODEL_FILE, RunError, load_model_file, load_run

    path = default_model("parser", "MODEL") if path is None else pathlib.Path(path)
    if is_package(path):
        path = path / KERAS_FILE
    if (path / "saved_model.pb").exists():
        from export.model_versions import load_version

        signature = load_version(0, path).signatures.get("serving_default")
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
    import os
    import sys
    import time

    from data_pipeline.sentence import Sentence
    from lisa_tf.models import DependencyParser
    from lisa_tf.parse import conllu_lines, parse_sentences, parse_with_export

    model = _load_parser(args.model)
    if isinstance(model, DependencyParser):
        def parse(chunk):
            return parse_sentences(model, chunk, token_budget=args.batch_tokens, tree=not args.greedy)
    elif args.greedy:
        raise ParseInputError(f"--greedy: {args.model} is an export, which always decodes trees; give the run instead")
    else:
        def parse(chunk):
            return parse_with_export(model, chunk, token_budget=args.batch_tokens)
    if args.input != "-" and not os.path.exists(args.input):
        raise ParseInputError(f"{args.input}: no such file")
    out = open(args.out, "w", encoding="utf-8") if args.out else sys.stdout
    sentences = tokens = 0
    started = time.perf_counter()
    try:
        words = _sentences(args)
        while True:
            chunk = [Sentence(words=w) for w in itertools.islice(words, CHUNK)]
            if not chunk:
                break
            parsed = parse(chunk)
            out.write("\n".join(conllu_lines(parsed)) + "\n")
            sentences += len(chunk)
            tokens += sum(len(s) for s in chunk)
    finally:
        if args.out:
            out.close()
    seconds = time.perf_counter() - started
    rate = sentences / seconds if seconds > 0 else 0.0
    print(f"parsed {sentences} sentences ({tokens} tokens) in {seconds:.1f} s: {rate:.1f} sentences/s",
          file=sys.stderr)
    return 0
