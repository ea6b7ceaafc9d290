"""Run an entry point so that a user mistake is one line on stderr, not a traceback."""
from __future__ import annotations

import sys
from typing import Callable

from fedlab.errors import FedlabError


def run_cli(main: Callable[[], object]) -> None:
    try:
        main()
    except FedlabError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
