"""``python -m lisa_tf stats --format {conll05,conll12,lisa,conllu} PATH``: corpus counts as one JSON line.

Prints ``{"sentences": …, "tokens": …, "predicates": …, "arguments": …}``; arguments are counted as
``srl-eval.pl`` does (see :mod:`data_pipeline.stats`).
"""

from __future__ import annotations

import argparse
import json

from data_pipeline.readers import FORMATS

TENSORFLOW = False
HELP = "print sentences, tokens, predicates and arguments of a corpus file or directory as one JSON line"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``--format`` (required) and the positional PATH."""
    parser.add_argument("--format", required=True, choices=FORMATS, help="input format")
    parser.add_argument("path", metavar="PATH", help="file or directory (conll05: a conll05st-release split directory or a pasted file)")


def run(args: argparse.Namespace) -> int:
    """Read, count, print; bad input raises ``DataFormatError`` (reported by the CLI as one line)."""
    from data_pipeline.stats import file_stats

    print(json.dumps(file_stats(args.path, args.format)))
    return 0
