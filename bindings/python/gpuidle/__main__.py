"""``python -m gpuidle``: the gpuidle command line.

::

    python -m gpuidle run -- python train.py        # profile a program, report at exit
    python -m gpuidle analyze trace.json.gz         # analyse a torch.profiler / gpuidle trace
    python -m gpuidle help
"""

from __future__ import annotations

import sys

from . import cli_main


def main() -> int:
    """The console entry point (``gpuidle`` once pip-installed)."""
    return cli_main(sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
