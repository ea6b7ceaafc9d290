"""Entry-point helpers: a user mistake is one line on stderr, never a traceback."""
from __future__ import annotations

import functools
import sys
from typing import Callable, TypeVar

from fedlab.errors import FedlabError

F = TypeVar("F", bound=Callable)
INTERRUPTED = False  # set when a command ends on Ctrl-C / SIGTERM (read by exit handlers)


def user_errors(fn: F) -> F:
    """Wrap a task function (inside ``@hydra.main``, which would print its own traceback)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except FedlabError as exc:
            print(f"error: {exc}", file=sys.stderr)
            sys.exit(2)

    return wrapper  # type: ignore[return-value]


def run_cli(main: Callable[[], object]) -> None:
    try:
        main()
    except FedlabError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        global INTERRUPTED
        INTERRUPTED = True
        print("interrupted", file=sys.stderr)
        sys.exit(130)


def run_exit(main: Callable[[], int]) -> None:
    """``sys.exit(main())`` for an argparse command, with run_cli's one-line errors."""
    code = 0

    def _run() -> None:
        nonlocal code
        code = main()

    run_cli(_run)
    sys.exit(code)
