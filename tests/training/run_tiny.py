"""Run a tiny training job in its own process (for distribution and resume tests).

Usage: python tests/training/run_tiny.py OUT [--cpus N] [section.key=value ...]
"""

import sys

args = sys.argv[1:]
out = args.pop(0)
cpus = 1
if args and args[0] == "--cpus":
    cpus = int(args[1])
    args = args[2:]

from lisa_tf.training.strategy import split_cpu  # noqa: E402

if cpus > 1:
    split_cpu(cpus)

import json  # noqa: E402

from lisa_tf.config import load_config  # noqa: E402
from lisa_tf.training.loop import train  # noqa: E402
from tests.models.conftest import tiny_overrides  # noqa: E402

config = load_config(None, tiny_overrides(**{"model.kind": "deepatt"}) + args)
summary = train(config, out, verbose=2)
print("SUMMARY " + json.dumps(summary), flush=True)
