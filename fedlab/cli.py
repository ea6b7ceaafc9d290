"""Entry-point helpers: a user mistake is one line on stderr, never a traceback; one way for the
argparse commands to take ``--config/--set`` and to find the data."""
from __future__ import annotations

import argparse
import functools
import os
import sys
from pathlib import Path
from typing import Callable, Sequence, TypeVar

from fedlab.env import mask_credentials
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
            print(f"error: {mask_credentials(str(exc))}", file=sys.stderr)
            sys.exit(2)

    return wrapper  # type: ignore[return-value]


def run_cli(main: Callable[[], object]) -> None:
    try:
        main()
    except FedlabError as exc:
        print(f"error: {mask_credentials(str(exc))}", file=sys.stderr)
        sys.exit(2)
    except BrokenPipeError:
        # the reader went away (`… | head`): not an error of the command's. Python's documented
        # handling: point stdout at devnull so the interpreter's final flush does not raise again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
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


# -- the argparse commands' shared options -----------------------------------------------------
class ArgumentParser(argparse.ArgumentParser):
    """A usage mistake is one FedlabError line (``error: ... (see PROG --help)``, exit 2 through
    run_cli / run_exit), not argparse's usage block."""

    def error(self, message: str):
        raise FedlabError(f"{message} (see {self.prog} --help)")


def add_config_args(parser: argparse.ArgumentParser, default_config: str = "production", *,
                    example: str = "retriever=bm25", positional: bool = False) -> None:
    """``--config NAME|PATH`` and the overrides, read back by ``config_from_args``.

    The overrides are a repeatable ``--set KEY=VALUE`` or, with ``positional=True`` (a command
    whose ``--set`` means something else, e.g. the gate's thresholds), bare ``KEY=VALUE`` words.
    """
    parser.add_argument("--config", default=default_config,
                        help=f"a config name in conf/ or a path to a YAML config (default: {default_config})")
    if positional:
        parser.add_argument("sets", nargs="*", metavar="KEY=VALUE", help=f"config overrides, e.g. {example}")
    else:
        parser.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                            help=f"a config override, repeatable (e.g. --set {example})")


def config_from_args(args: argparse.Namespace, extra: Sequence[str] = (), compose: Callable | None = None):
    """The config ``add_config_args`` asked for: ``compose(args.config, [*args.sets, *extra])``
    (``fedlab.config.compose`` unless another composer, e.g. one switching the agent on, is given),
    its settings checked against their schema (fedlab.schema) before anything uses them."""
    from fedlab.schema import check_schema

    if compose is None:
        from fedlab.config import compose
    cfg = compose(args.config, [*args.sets, *extra])
    check_schema(cfg)
    return cfg


def corpus_dir(cfg, config_name: str) -> Path:
    """The corpus directory of ``cfg``, as the Hydra apps find it: ``corpus.dir`` =
    ``${paths.data_dir}/corpus/fomc``, data_dir = $FEDLAB_DATA_DIR, else <root>/data (a relative
    value is read against the working directory). A value that does not resolve is one line."""
    from fedlab.config import require_keys

    require_keys(cfg, ("paths", "corpus"), config_name)
    return Path(str(cfg.corpus.dir))
