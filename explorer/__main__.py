"""``python -m explorer``; see :mod:`explorer.cli`."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
