"""Fuzzing the corpus readers and the scorer: on any input they return or raise ``DataFormatError``.

Each target reads real files (excerpts of ``data/``, ``tests/fixtures/`` and ``../shared/data``) through
the entry point a user reaches (``read_sentences``, ``read_split`` with ``--parse``, ``srl_eval.evaluate``).
Two kinds of input are tried: arbitrary bytes (or random cell text) in place of one file, and mutations of
the real files (lines deleted, duplicated or swapped, a cell added, dropped or replaced, the file truncated
at a byte, non-UTF-8 bytes inserted). Any exception other than
:class:`~data_pipeline.errors.DataFormatError`, or one that does not name a file of the input and a line
inside it, is a failure.

The same strategies and checks back ``tests/data_pipeline/test_reader_fuzz.py`` and
``tests/evaluation/test_srl_eval_fuzz.py`` (few examples); this script runs many, prints inputs tried and
failures per target, and writes ``benchmarks/out/fuzz_readers.json``::

    PYTHONPATH=. python benchmarks/fuzz_readers.py [--examples 2000] [--targets conllu lisa ...]
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import json
import os
import pathlib
import platform
import re
import sys
import tempfile
import time
import traceback
import zlib
from typing import Callable, Optional

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from data_pipeline.column_file import read_lines
from data_pipeline.errors import DataFormatError

ROOT = pathlib.Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
DATA = ROOT / "data"
SHARED = pathlib.Path(os.environ.get("LISA_TF_SHARED_DATA", ROOT.parent / "shared" / "data"))
OUT = ROOT / "benchmarks" / "out" / "fuzz_readers.json"


class MissingData(Exception):
    """A target's real files are not present (``../shared/data`` absent)."""


# ---------------------------------------------------------------------------------------------------------------------
# Real seed files


def sentence_blocks(path: pathlib.Path) -> list[list[str]]:
    """The sentences of a column file as lists of lines: comments and markers before the tokens, the blank
    line after them."""
    if not path.exists():
        raise MissingData(f"needs {path}; not present here")
    blocks: list[list[str]] = [[]]
    for line in read_lines(path):
        blocks[-1].append(line)
        if not line.strip() and any(cell.strip() and not cell.startswith("#") for cell in blocks[-1]):
            blocks.append([])
    return [block for block in blocks if any(cell.strip() and not cell.startswith("#") for cell in block)]


def sentence_excerpt(path: pathlib.Path, count: int) -> list[str]:
    """Lines of the first ``count`` sentences of a column file."""
    return [line for block in sentence_blocks(path)[:count] for line in block]


def _has_range_line(block: list[str]) -> bool:
    return any(re.fullmatch(r"\d+-\d+", line.split("\t", 1)[0]) for line in block)


def _ewt_dev_excerpts() -> tuple[list[str], list[str]]:
    """Aligned ``.gold_conll`` and CoNLL-U excerpts of the shipped PropBank-EWT dev split: its first 3
    sentences and the first later one whose CoNLL-U has a multiword-token range line."""
    gold = sentence_blocks(DATA / "propbank-ewt" / "dev.gold_conll.gz")
    conllu = sentence_blocks(DATA / "propbank-ewt" / "dev.conllu.gz")
    chosen = [0, 1, 2, next(i for i in range(3, len(conllu)) if _has_range_line(conllu[i]))]
    return [line for i in chosen for line in gold[i]], [line for i in chosen for line in conllu[i]]


def _lisa_seed() -> list[str]:
    """The CoNLL-2005 fixture sentences in LISA's combined format, with head-rule dependencies."""
    from data_pipeline.head_rules import sentence_heads
    from data_pipeline.readers.conll05 import read_conll05
    from data_pipeline.readers.lisa_columns import lisa_lines

    lines = []
    for number, sentence in enumerate(read_conll05(FIXTURES / "readers" / "test.wsj")):
        heads, labels = sentence_heads(sentence)
        sentence = dataclasses.replace(sentence, heads=heads, dep_labels=labels, doc_id="conll05")
        lines += lisa_lines(sentence, number) + [""]
    return lines


# ---------------------------------------------------------------------------------------------------------------------
# Targets


@dataclasses.dataclass
class Target:
    """Files to write (name → lines of a real file) and how to read them from the directory they are in."""

    name: str
    files: dict[str, list[str]]
    run: Callable[[pathlib.Path], object]


def _read(relative: str, fmt: str) -> Callable[[pathlib.Path], object]:
    def run(folder: pathlib.Path) -> object:
        from data_pipeline.readers import read_sentences

        return read_sentences(folder / relative, fmt)

    return run


def _read_with_parse(folder: pathlib.Path) -> object:
    from data_pipeline.splits import read_split

    return read_split(str(folder / "dev.gold_conll"), "conll12", str(folder / "dev.conllu"))


def _score(folder: pathlib.Path) -> object:
    from lisa_tf.evaluation.srl_eval import evaluate_swap

    return evaluate_swap(folder / "gold.props", folder / "predicted.props", warn=None)


def _build_target(name: str) -> Target:
    if name == "conll05-split":
        mini = FIXTURES / "readers" / "test.wsj"
        files = {f"test.wsj/{layer}/test.wsj.{layer}": read_lines(mini / layer / f"test.wsj.{layer}")
                 for layer in ("words", "props", "synt.cha")}
        return Target(name, files, _read("test.wsj", "conll05"))
    if name == "conll05-pasted":
        return Target(name, {"test.wsj.pasted": read_lines(FIXTURES / "readers" / "test.wsj.pasted")},
                      _read("test.wsj.pasted", "conll05"))
    if name == "conll12-gold_conll":
        gold, _ = _ewt_dev_excerpts()
        return Target(name, {"dev.gold_conll": gold}, _read("dev.gold_conll", "conll12"))
    if name == "conll12-gold_skel":
        skeletons = sorted((SHARED / "propbank-release" / "data" / "google" / "ewt").glob("*/00/*.gold_skel.gz"))
        if not skeletons:
            raise MissingData(f"needs the PropBank skeletons under {SHARED / 'propbank-release'}; not present here")
        return Target(name, {"doc.gold_skel": sentence_excerpt(skeletons[0], 3)}, _read("doc.gold_skel", "conll12"))
    if name == "lisa":
        return Target(name, {"mini.lisa": _lisa_seed()}, _read("mini.lisa", "lisa"))
    if name == "conllu":
        _, conllu = _ewt_dev_excerpts()
        return Target(name, {"dev.conllu": conllu}, _read("dev.conllu", "conllu"))
    if name == "parse":
        gold, conllu = _ewt_dev_excerpts()
        return Target(name, {"dev.gold_conll": gold, "dev.conllu": conllu}, _read_with_parse)
    if name == "srl_eval":
        gold = sentence_excerpt(FIXTURES / "conll05" / "test.wsj.props.gz", 4)
        predicted = sentence_excerpt(FIXTURES / "deepatt" / "single" / "conll05.wsj.result.gz", 4)
        return Target(name, {"gold.props": gold, "predicted.props": predicted}, _score)
    raise KeyError(name)


#: Every target: the four readers (two layouts each for CoNLL-2005 and CoNLL-2012), a parse attached to
#: data, and the scorer.
TARGETS = ("conll05-split", "conll05-pasted", "conll12-gold_conll", "conll12-gold_skel", "lisa", "conllu", "parse",
           "srl_eval")
READER_TARGETS = TARGETS[:-1]

_cache: dict[str, Target] = {}


def seed_files(seed: Target) -> dict[str, bytes]:
    """The target's real files as UTF-8 bytes, one line end after each line."""
    return {name: "".join(line + "\n" for line in lines).encode("utf-8") for name, lines in seed.files.items()}


def target(name: str) -> Target:
    """The target ``name`` (seeds read once); raises :class:`MissingData` when its files are absent."""
    if name not in _cache:
        _cache[name] = _build_target(name)
    return _cache[name]


# ---------------------------------------------------------------------------------------------------------------------
# Strategies

#: Cells a reader gives meaning to, and some it must reject (digits ``isdigit`` accepts but ``int`` does not).
CELLS = ("", "-", "_", "*", "*)", "(V*)", "(A0*", "(ARG1*", "((*", "(*", "*))", ")", "(", "O", "B-A0", "I-A1", "B-",
         "X", "0", "1", "2", "-1", "007", "99999999999999999999", "1-2", "1.1", "2-1", "#", "#begin document (x); part 0",
         "#end document", "[WORD]", "say", "say.01", "01", "root", "NN", "a b", "\u00e9", "\u0663", "\u00b2", "1\u00b2",
         "\u2460", "\uff11", "\x00")
_cell = st.one_of(st.sampled_from(CELLS), st.sampled_from(CELLS), st.sampled_from(CELLS), st.text(max_size=8))
_BAD_BYTES = (b"\xff", b"\xfe", b"\xc3", b"\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe2\x82", b"\x1f\x8b")


def _split(line: bytes) -> tuple[list[bytes], bytes]:
    """Cells of a line and the separator to join them back (tab when the line has tabs)."""
    if b"\t" in line:
        return line.split(b"\t"), b"\t"
    return line.split(), b"   "


@st.composite
def _mutate_lines(draw, lines: list[bytes]) -> list[bytes]:
    """One line-level mutation: delete, duplicate, swap, add/drop/replace/edit a cell, change a number cell
    (ids, heads, token numbers), or insert a line."""
    lines = list(lines)
    kind = draw(st.sampled_from(("delete", "duplicate", "swap", "add cell", "drop cell", "replace cell", "edit cell",
                                 "number cell", "insert line")))
    if not lines:
        kind = "insert line"
    i = draw(st.integers(0, max(len(lines) - 1, 0)))
    if kind == "delete":
        del lines[i]
    elif kind == "duplicate":
        lines.insert(draw(st.integers(0, len(lines))), lines[i])
    elif kind == "swap":
        j = draw(st.integers(0, len(lines) - 1))
        lines[i], lines[j] = lines[j], lines[i]
    elif kind == "insert line":
        row = draw(st.lists(_cell, max_size=6))
        lines.insert(draw(st.integers(0, len(lines))), "\t".join(row).encode("utf-8"))
    else:
        cells, separator = _split(lines[i])
        k = draw(st.integers(0, len(cells)))
        if kind == "add cell":
            cells.insert(k, draw(_cell).encode("utf-8"))
        elif cells and kind == "drop cell":
            del cells[min(k, len(cells) - 1)]
        elif kind == "number cell":
            numbers = [k for k, cell in enumerate(cells) if cell.isdigit()]
            if numbers:
                k = draw(st.sampled_from(numbers))
                value = int(cells[k])
                cells[k] = draw(st.sampled_from([str(value + 1), str(value + 1000), str(-value), "\u00b2", f"{value}\u00b2",
                                                 "\u2460", "\uff11", f"{value}.5", "_", "-"])).encode("utf-8")
        elif cells and kind == "edit cell":
            k = min(k, len(cells) - 1)
            text = cells[k].decode("utf-8", "replace")
            at = draw(st.integers(0, len(text)))
            cut = draw(st.integers(0, 1))
            cells[k] = (text[:at] + draw(st.sampled_from(CELLS)) + text[at + cut:]).encode("utf-8")
        elif cells:
            cells[min(k, len(cells) - 1)] = draw(_cell).encode("utf-8")
        lines[i] = separator.join(cells)
    return lines


@st.composite
def _mutate_bytes(draw, raw: bytes) -> bytes:
    """One byte-level mutation: truncate at a byte, insert non-UTF-8 bytes, or gzip the file."""
    kind = draw(st.sampled_from(("truncate", "bad bytes", "gzip")))
    at = draw(st.integers(0, len(raw)))
    if kind == "truncate":
        return raw[:at]
    if kind == "bad bytes":
        return raw[:at] + draw(st.sampled_from(_BAD_BYTES)) + raw[at:]
    return gzip.compress(raw, mtime=0)


@st.composite
def mutated_files(draw, seed: Target) -> dict[str, bytes]:
    """The target's real files with one to three line mutations, then up to two byte mutations, applied to one of
    them."""
    files = seed_files(seed)
    name = draw(st.sampled_from(sorted(files)))
    lines = files[name].split(b"\n")
    for _ in range(draw(st.integers(1, 3))):
        lines = draw(_mutate_lines(lines))
    raw = b"\n".join(lines)
    for _ in range(draw(st.integers(0, 2))):
        raw = draw(_mutate_bytes(raw))
    files[name] = raw
    return files


@st.composite
def arbitrary_files(draw, seed: Target) -> dict[str, bytes]:
    """One of the target's files replaced by arbitrary bytes (some starting like gzip), or by random lines of random
    cells."""
    files = seed_files(seed)
    name = draw(st.sampled_from(sorted(files)))
    rows = st.lists(st.lists(_cell, max_size=16).map(lambda cells: "\t".join(cells)), max_size=20)
    gzip_like = st.binary(max_size=400).map(lambda raw: b"\x1f\x8b\x08" + raw)
    files[name] = draw(st.one_of(st.binary(max_size=400), gzip_like, rows.map(lambda r: "\n".join(r).encode("utf-8"))))
    return files


def inputs(seed: Target) -> st.SearchStrategy[dict[str, bytes]]:
    """Both kinds of input, mutations of the real files drawn three times as often."""
    return st.one_of(mutated_files(seed), mutated_files(seed), mutated_files(seed), arbitrary_files(seed))


# ---------------------------------------------------------------------------------------------------------------------
# The property


class NotADataFormatError(AssertionError):
    """A reader raised something other than a well-placed DataFormatError."""


def check(seed: Target, files: dict[str, bytes]) -> None:
    """Write ``files`` to a fresh directory and read them: returning, or a DataFormatError that names one of the
    files (or a folder holding them) and, when it names a line, a line of that file (or one past its end)."""
    with tempfile.TemporaryDirectory(prefix="fuzz-") as scratch:
        folder = pathlib.Path(scratch)
        for name, raw in files.items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_bytes(raw)
        try:
            seed.run(folder)
        except DataFormatError as error:
            _check_place(error, folder, files)


def _check_place(error: DataFormatError, folder: pathlib.Path, files: dict[str, bytes]) -> None:
    where = pathlib.Path(error.path) if error.path else None
    if where is None or not (where == folder or folder in where.parents):
        raise NotADataFormatError(f"DataFormatError names no input file: {error}")
    if error.line is None:
        return
    relative = where.relative_to(folder).as_posix()
    if relative not in files:
        raise NotADataFormatError(f"DataFormatError names a line of {relative}, which is not a file: {error}")
    raw = files[relative]
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error):
            raise NotADataFormatError(f"DataFormatError names a line of a file that does not decompress: {error}")
    n_lines = raw.count(b"\n") + (0 if raw.endswith(b"\n") or not raw else 1)
    if not 1 <= error.line <= n_lines + 1:
        raise NotADataFormatError(f"DataFormatError names line {error.line} of a file of {n_lines} lines: {error}")


# ---------------------------------------------------------------------------------------------------------------------
# The benchmark


def _signature(error: BaseException) -> str:
    """Exception type and the innermost frame of the project's code that raised it."""
    frames = [f for f in traceback.extract_tb(error.__traceback__)
              if f.filename.startswith(str(ROOT)) and not f.filename.endswith("fuzz_readers.py")]
    place = f"{pathlib.Path(frames[-1].filename).relative_to(ROOT)}:{frames[-1].lineno}" if frames else "?"
    kind = type(error).__name__ if type(error).__module__ == "builtins" else f"{type(error).__module__}.{type(error).__name__}"
    return f"{kind} at {place}"


def fuzz(name: str, examples: int, seed: Optional[int] = None) -> dict:
    """Run ``examples`` inputs against target ``name``, recording every failure instead of stopping at the first."""
    subject = target(name)
    tried = 0
    failures: dict[str, dict] = {}

    @settings(max_examples=examples, deadline=None, database=None, derandomize=seed is None,
              suppress_health_check=list(HealthCheck), print_blob=False)
    @given(inputs(subject))
    def run(files):
        nonlocal tried
        tried += 1
        try:
            check(subject, files)
        except Exception as error:  # noqa: BLE001 - every other exception is a finding
            found = failures.setdefault(_signature(error), {"count": 0, "example": str(error)[:200]})
            found["count"] += 1

    if seed is not None:
        from hypothesis import seed as hypothesis_seed

        run = hypothesis_seed(seed)(run)
    start = time.perf_counter()
    run()
    return {"target": name, "inputs": tried, "failing_inputs": sum(f["count"] for f in failures.values()),
            "distinct_failures": len(failures), "failures": failures,
            "seconds": round(time.perf_counter() - start, 1)}


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=2000, help="inputs per target (default 2000)")
    parser.add_argument("--targets", nargs="+", choices=TARGETS, default=list(TARGETS))
    parser.add_argument("--seed", type=int, default=None, help="random seed (default: derandomized, reproducible)")
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args(argv)

    rows, skipped = [], {}
    for name in args.targets:
        try:
            rows.append(fuzz(name, args.examples, args.seed))
        except MissingData as missing:
            skipped[name] = str(missing)
            continue
        row = rows[-1]
        print(f"{name:<20} {row['inputs']:>7} inputs  {row['failing_inputs']:>6} failing  "
              f"{row['distinct_failures']:>3} distinct  {row['seconds']:>7.1f} s", flush=True)
        for signature, found in row["failures"].items():
            print(f"    {found['count']:>6} × {signature}: {found['example'][:100]}")
    for name, reason in skipped.items():
        print(f"{name:<20} skipped: {reason}")
    report = {
        "task": "reader and scorer fuzzing: inputs tried and failures (exceptions other than a placed DataFormatError)",
        "examples_per_target": args.examples,
        "seed": args.seed,
        "rows": rows,
        "skipped": skipped,
        "python": platform.python_version(),
        "machine": platform.machine(),
    }
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {out}")
    return 1 if any(row["failing_inputs"] for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
