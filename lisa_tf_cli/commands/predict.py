"""``python -m lisa_tf predict``: label raw or tokenised text with a trained model."""

HELP = "label raw text (or tokenised sentences) with a run, a .keras file or an export: frames with offsets"

#: Sentences labelled per model call; input is read lazily, so memory stays bounded on any file size.
CHUNK = 256
#: ``--format conll12``: the document id, and the frameset column of a predicate without a roleset (a
#: predicate row of ``.gold_conll`` needs one: a model without a sense head, or a word no roleset is
#: known for).
DOCUMENT = "predict"
UNKNOWN_SENSE = "?"
#: Options may come between the words (``predict MODEL --format jsonl TEXT``): they are all ``text``.
INTERMIXED = "text"
#: What ``--format pretty`` escapes: the control characters but tab (C0, DEL, C1).
CONTROL_CHARACTERS = "[\x00-\x08\x0a-\x1f\x7f-\x9f]"

from data_pipeline.errors import UserError  # noqa: E402  (pure Python: keeps --help fast)
from data_pipeline.predicate_kinds import NO_POS_TAGS  # noqa: E402
from data_pipeline.text_lines import text_lines  # noqa: E402
from lisa_tf_cli.commands._text_input import (check_creatable, check_model, check_readable,  # noqa: E402
                                          positive_int)


def add_arguments(parser):
    parser.add_argument("text", nargs="*", metavar="[MODEL] TEXT",
                        help="paragraphs to label (split into sentences and tokenised); when the first is a run "
                             "directory, .keras file or SavedModel export, it is the model (else the shipped model, "
                             "models/srl)")
    parser.add_argument("--model", help="run directory, .keras file or SavedModel export (default: the shipped "
                                        "model, models/srl); an export runs its graph when loaded: give only "
                                        "models you trust")
    parser.add_argument("--input", help="file to label, one paragraph (or with --tokenized one sentence) per line; - = stdin")
    parser.add_argument("--tokenized", action="store_true", help="input lines are sentences of space-separated tokens")
    parser.add_argument("--parse", help="CoNLL-U file: its words are the sentences and its heads are injected (LISA)")
    parser.add_argument("--format", default="pretty", choices=("pretty", "jsonl", "conll05", "conll12", "conllu"),
                        help="pretty: one description per predicate; jsonl: one JSON object per sentence, with "
                             "\"line\": its --input line (or TEXT argument) number, and an empty record for a blank "
                             "line; conll05: words + props columns (CoNLL-2005's pasted layout); conll12: .gold_conll "
                             "columns (one document; the roleset's lemma and sense number, kill and 01, in the lemma "
                             f"and frameset columns, or the word and {UNKNOWN_SENSE!r} where the model predicts no "
                             "roleset); conllu: tokens with predicted POS (XPOS), heads and dependency labels")
    parser.add_argument("--predicates", choices=("all", "verbal"), default="all",
                        help="all (default): every predicate the model finds, nominal ones and auxiliaries included "
                             "(as PropBank-EWT annotates them); verbal: verb frames only, as most SRL tools give "
                             "(no nouns, no auxiliaries such as had, been, did, 'll)")
    parser.add_argument("--frames", help="your own PropBank frame index (python -m data_pipeline.frame_index build), "
                                         "merged over the shipped one: its meanings win, its lemmas' rolesets "
                                         "become senses of their words (models with a sense head only)")
    parser.add_argument("--no-constraints", dest="constraints", action="store_false",
                        help="decode with the plain BIO Viterbi instead of the frame constraints (default: at most one "
                             "of each core role, C-/R- after their role, only the predicted roleset's core roles)")
    parser.add_argument("--out", help="write here instead of standard output")
    parser.add_argument("--batch-tokens", type=positive_int, default=4096, help="most padded tokens per batch")
    parser.add_argument("--max-sentence-tokens", type=positive_int, default=None,
                        help="longest sentence to label (default: the model's longest training sentence, as the "
                             "server; else 512); longer ones are skipped, reported and counted")


def _open(path, mode, flag):
    """``open(path)``, or a UserError naming ``flag`` and the path."""
    try:
        return open(path, mode, encoding="utf-8")
    except OSError as error:
        raise UserError(f"{flag} {path}: {error.strerror}; expected a {'readable' if mode == 'r' else 'writable'} "
                        "text file") from None


def _units(args, opened: list):
    """``(source, text or tokens, heads, skipped, line)`` per unit of input, read lazily; ``source``
    names the unit for messages (``FILE:LINE``), ``skipped`` says why a line cannot be labelled,
    ``line`` is its number (the ``--input`` or ``--parse`` line, or the TEXT argument's). The
    ``--input`` file, once open, is appended to ``opened`` (its position gives the progress)."""
    import sys

    from data_pipeline.readers.conllu import read_conllu
    from data_pipeline.input_limits import MAX_PARAGRAPH_CHARACTERS

    if args.parse:
        for sentence in read_conllu(args.parse):
            yield f"{args.parse}:{sentence.line}", list(sentence.words), list(sentence.heads), None, sentence.line
        return
    if args.text:
        for number, paragraph in enumerate(args.text, start=1):
            yield f"TEXT {number}", (paragraph.split() if args.tokenized else paragraph), None, None, number
    if not args.input:
        return
    name = "<stdin>" if args.input == "-" else args.input
    if args.input == "-":
        handle = sys.stdin.buffer
    else:
        try:
            handle = open(args.input, "rb")
        except OSError as error:
            raise UserError(f"--input {args.input}: {error.strerror}; expected a readable text file") from None
    opened.append(handle)
    with handle:
        # blank lines too: --format jsonl writes an empty record for each, so records and lines align
        for number, line, skipped in text_lines(handle, MAX_PARAGRAPH_CHARACTERS, blank=True):
            unit = None if line is None else (line.split() if args.tokenized else line)
            yield f"{name}:{number}", unit, None, skipped, number


def _split_model(args) -> None:
    """``predict MODEL TEXT…`` or ``predict TEXT…`` (the shipped model): sets ``args.model`` (None = the
    shipped one) and ``args.text``. The first argument is the model when it exists, or when text
    follows and it reads as a path: one word ending in ``.keras``, or with a ``/`` under a directory
    that exists (``models/srlx``: a mistyped path is reported as missing rather than labelled as
    text; ``and/or`` is text). A shipped model is named with ``--model NAME``."""
    import os

    if args.model is not None or not args.text:
        return
    first = args.text[0]
    one_word = len(args.text) > 1 and first and not any(c.isspace() for c in first)
    parent = os.path.dirname(first.rstrip("/"))
    as_path = one_word and (first.endswith(".keras") or ("/" in first and parent and os.path.isdir(parent)))
    if os.path.exists(first) or as_path:
        args.model, args.text = first, args.text[1:]


def check(args) -> None:
    """Before TensorFlow is imported: the model (``[MODEL]`` or ``--model``, else the shipped one), the
    ``--input`` and ``--parse`` files, the ``--out`` path and the ``--frames`` index (a UserError naming
    the first wrong one)."""
    _split_model(args)
    if args.parse and (args.text or args.input):
        raise UserError("--parse gives the sentences (its words); do not also give TEXT or --input")
    if not (args.text or args.input or args.parse):
        raise UserError("nothing to label: give TEXT, --input FILE (- for stdin) or --parse FILE.conllu")
    check_model(args.model)
    check_readable(args.input, "--input")
    check_readable(args.parse, "--parse")
    check_creatable(args.out, "--out")
    from lisa_tf_cli.commands._frame_index import check_frame_index

    check_frame_index(args.frames, "--frames")  # read and checked whole, before the model loads


def _export_cache(model, frames=None) -> None:
    """A packaged model is labelled through its SavedModel export, which starts without Keras or
    tracing: its labelling export, built into the cache on the first ``predict`` and reused from then on,
    or the server's export when ``serve`` built one first (it labels alike, a little slower to restore:
    no second export is built) (:mod:`lisa_tf.packages.export_cache`); with ``--frames``, an export of its
    own, with the user's frame index merged into it. A cache that cannot be written leaves the ``.keras``
    model to label, with a warning."""
    import sys

    from lisa_tf.packages.export_cache import ExportCacheError, labelling_export
    from lisa_tf.packages.finding import is_package

    if not is_package(model):
        return
    from export.cache_build import build_export

    try:
        if labelling_export(model, frames) is not None:  # built: nothing to build (the server's labels alike)
            return
        build_export(model, report=lambda line: print(line, file=sys.stderr, flush=True), frames=frames,
                     labelling=True)
    except ExportCacheError as error:
        print(f"warning: {error}; labelling with {model} without it (a slower start)", file=sys.stderr)


def frameset_columns(predicate: dict) -> tuple[str, str]:
    """The lemma and frameset columns of a predicate row of ``--format conll12``, as OntoNotes'
    ``.gold_conll`` gives them: the roleset's lemma and sense number (``bark``, ``01``; the reader
    joins them into ``bark.01`` again), or the word and :data:`UNKNOWN_SENSE` without a roleset."""
    lemma, _, number = (predicate.get("sense") or "").rpartition(".")
    return (lemma, number) if lemma and number else (predicate["text"].lower(), UNKNOWN_SENSE)


def shown(text: str) -> str:
    """``text`` as ``--format pretty`` writes it, for a terminal: its control characters but tab escaped
    (``\\x1b``), so escape sequences in a roleset name, a role description (a frame index is a file
    anyone may write) or the input (colours, a window title, cursor moves) are shown, not obeyed, and a
    frame stays on its line."""
    import re

    return re.sub(CONTROL_CHARACTERS, lambda match: match.group().encode("unicode_escape").decode("ascii"), text)


def _write(result, fmt, out):
    import json

    from data_pipeline.props_writer import props_lines
    from data_pipeline.readers.conll12 import gold_conll_lines
    from data_pipeline.sentence import Predicate, Sentence, Span
    from lisa_tf.decoding.frame_meanings import heading

    if fmt == "jsonl":
        out.write(json.dumps(result, ensure_ascii=False) + "\n")
        return
    result.pop("line", None)
    words = [t["text"] for t in result["tokens"]]
    if fmt == "pretty":
        out.write(shown(result["text"]) + "\n")
        for predicate in result["predicates"]:
            out.write(f"  {shown(heading(predicate))}: {shown(predicate['description'])}\n")
        out.write("\n")
        return
    if fmt == "conllu":
        if not words:
            return
        for i, token in enumerate(result["tokens"], start=1):
            # PTB tags are language-specific: the XPOS column (the one the project's CoNLL-U reader reads).
            out.write(f"{i}\t{token['text']}\t_\t_\t{token.get('pos', '_')}\t_\t{token.get('head', '_')}\t"
                      f"{token.get('deprel', '_')}\t_\t_\n")
        out.write("\n")
        return
    predicates = [
        Predicate(p["token"], *frameset_columns(p), tuple(sorted(
            [Span(a["token_start"], a["token_end"] - 1, a["role"]) for a in p["arguments"]]
            + [Span(p["token"], p["token"], "V")])))
        for p in result["predicates"]
    ]
    if fmt == "conll12":
        if not words:
            return
        # POS where the model predicts it (LISA, SA), else "-"; no constituency parse: "*" per token.
        pos = [t.get("pos", "-") for t in result["tokens"]]
        sentence = Sentence(words=words, pos=pos, parse_bits=["*"] * len(words), predicates=predicates)
        out.write("\n".join(gold_conll_lines(DOCUMENT, [sentence])[1:-1]) + "\n")
        return
    if not words:
        return
    # conll05: the words column, then the props columns (the target column and one per predicate),
    # whitespace-aligned as the props columns are
    lines = props_lines(Sentence(words=words, predicates=predicates))
    width = max(map(len, words))
    out.write("\n".join(f"{word.ljust(width)}  {line}" for word, line in zip(words, lines)) + "\n\n")


def _progress(sentences: int, seconds: float, fraction) -> str:
    """``1200 sentences  85.3 sentences/s  40%  ETA 21s`` (share and ETA when the input's size is known)."""
    from lisa_tf.training.progress import duration

    line = f"{sentences} sentences  {sentences / seconds if seconds > 0 else 0.0:.1f} sentences/s"
    if fraction:
        line += f"  {fraction:.0%}  ETA {duration(seconds * (1 - fraction) / fraction)}"
    return line + "   "


def _read_share(opened: list, size: int):
    """How much of the ``--input`` file has been read (None when its size is unknown)."""
    if not size or not opened:
        return None
    return 1.0 if opened[0].closed else opened[0].tell() / size


def run(args) -> int:
    import os
    import sys
    import time

    from lisa_tf.labelling.predictor import label_units, load
    from lisa_tf.util.native_logs import stderr_is_terminal

    check(args)
    if args.constraints:  # the export decodes with the constraints; without them the .keras model labels
        _export_cache(check_model(args.model), args.frames)
    try:
        predictor = load(args.model, token_budget=args.batch_tokens, max_sentence_tokens=args.max_sentence_tokens,
                         prefer_export=True, frames=args.frames, constraints=args.constraints)
    except FileNotFoundError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.predicates == "verbal" and not predictor.tells_verbs:  # refused, not ignored, before any labelling
        raise UserError(f"--predicates verbal: {args.model or 'models/srl'}: {NO_POS_TAGS}; label all predicates "
                        "(--predicates all)")
    out = _open(args.out, "w", "--out") if args.out else sys.stdout
    progress = stderr_is_terminal()  # the real stderr (the command line filters it)
    counts = {"sentences": 0, "tokens": 0, "predicates": 0, "empty": 0, "skipped": 0}

    def skip(source, reason):
        counts["skipped"] += 1
        print(("\n" if progress else "") + f"warning: {source}: {reason}; skipped", file=sys.stderr)

    if args.format == "conll12":
        out.write(f"#begin document ({DOCUMENT}); part 000\n")
    opened: list = []
    size = os.path.getsize(args.input) if args.input and args.input != "-" and os.path.isfile(args.input) else 0
    started = time.perf_counter()

    def write(result, line):
        counts["sentences"] += 1
        counts["tokens"] += len(result["tokens"])
        counts["predicates"] += len(result["predicates"])
        counts["empty"] += not result["tokens"]
        _write({"line": line, **result}, args.format, out)

    try:
        for chunk in label_units(predictor, _units(args, opened), args.predicates, CHUNK):
            for (source, unit, _, reason, line), results in chunk:
                if results is None:
                    skip(source, reason)
                elif not results:  # a blank line: an empty record keeps the output aligned with the input
                    write({"text": "", "tokens": [], "predicates": []}, line)
                for result in results or []:
                    if "skipped" in result:  # reported and counted, not written
                        skip(source, result["skipped"]["reason"])
                    else:
                        write(result, line)
            out.flush()  # what is labelled is on disk, whatever happens to the lines after it
            if progress:
                print("\r" + _progress(counts["sentences"], time.perf_counter() - started,
                                        _read_share(opened, size)),
                      end="", file=sys.stderr, flush=True)
    except UserError as error:
        print(f"\nerror: {error}" if progress else f"error: {error}", file=sys.stderr)
        return 2
    finally:
        if args.format == "conll12":
            out.write("#end document\n")
        if args.out:
            out.close()
    print(("\n" if progress else "") + f"labelled {counts['sentences']} sentences ({counts['tokens']} tokens, "
          f"{counts['predicates']} predicates; {counts['empty']} empty); {counts['skipped']} skipped", file=sys.stderr)
    return 2 if counts["skipped"] else 0
