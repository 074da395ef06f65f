"""``python -m lisa_tf <command>``: the command line (:mod:`lisa_tf_cli`).

The one import of the library that reaches above it (``pyproject.toml``'s import contracts name it):
``python -m`` runs the package's own ``__main__``, so the command line keeps its short name.
"""

import sys

from lisa_tf_cli.main import finish, main

if __name__ == "__main__":
    sys.exit(finish(main()))
