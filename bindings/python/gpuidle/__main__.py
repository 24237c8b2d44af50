"""``python -m gpuidle``: the gpuidle command line.

::

    python -m gpuidle run -- python train.py        # profile a program, report at exit
    python -m gpuidle analyze trace.json.gz         # analyse a torch.profiler / gpuidle trace
    python -m gpuidle help
"""

from __future__ import annotations

import signal
import sys

from . import cli_main


def main() -> int:
    """The console entry point (``gpuidle`` once pip-installed)."""
    # As the native command: Ctrl-C ends it at once (Python's own handler would only raise
    # KeyboardInterrupt once a long `analyze` returned). `run` sets its own while the command
    # runs. Left alone where SIGINT is ignored (a background job) or not ours to change.
    try:
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            signal.signal(signal.SIGINT, signal.SIG_DFL)
    except (ValueError, OSError):
        pass
    return cli_main(sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
