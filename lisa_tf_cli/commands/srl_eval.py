"""``python -m lisa_tf srl-eval GOLD PRED [--swap]``: the CoNLL-2005 ``srl-eval.pl`` report, in Python.

Without options the output is the script's text report (stdout) and warnings (stderr). ``--swap`` adds
the end-to-end convention of He et al. (2017): the run with the files exchanged and a final line with
precision from that run, recall from the normal one, and their F1. ``--json`` prints the result as one
JSON object instead.
"""

from __future__ import annotations

import argparse
import json

TENSORFLOW = False
HELP = "score CoNLL-2005 props files like the official srl-eval.pl (optionally with the --swap convention)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Positional GOLD and PRED props files (plain or gzip) and the options."""
    parser.add_argument("gold", metavar="GOLD", help="gold props file (CoNLL-2005 Start-End format, plain or .gz)")
    parser.add_argument("predicted", metavar="PRED", help="predicted props file, line-aligned with GOLD")
    parser.add_argument("--swap", action="store_true",
                        help="also score with the files exchanged; precision from that run (He et al. 2017)")
    parser.add_argument("--no-warnings", action="store_true", help="do not print warnings (the script's -noW)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON instead of the text report")


def run(args: argparse.Namespace) -> int:
    """Score and print; bad input raises ``DataFormatError`` (reported by the CLI as one line)."""
    from lisa_tf.evaluation import srl_eval

    warn = None if args.no_warnings else srl_eval.print_warning
    if args.swap:
        result = srl_eval.evaluate_swap(args.gold, args.predicted, warn=warn)
    else:
        result = srl_eval.evaluate(args.gold, args.predicted, warn=warn)
    if args.json:
        print(json.dumps(result.to_dict(), indent=2, sort_keys=True))
    else:
        print(result.report(), end="")
    return 0
