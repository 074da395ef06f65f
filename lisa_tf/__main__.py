"""``python -m lisa_tf <command>``."""

import sys

from lisa_tf.cli import main

if __name__ == "__main__":
    sys.exit(main())
