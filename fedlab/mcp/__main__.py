"""`python -m fedlab.mcp`: serve search_fomc and get_document over stdio (see fedlab.mcp.server).

    python -m fedlab.mcp [--config production] [--set key=value ...] [--max-top-k 50]
"""
from __future__ import annotations

import logging
import sys

from fedlab.cli import ArgumentParser, add_config_args, config_from_args, run_cli
from fedlab.mcp.server import DEFAULT_CONFIG, SERVER_NAME, Limits


def parse_args(argv: list[str] | None = None):
    p = ArgumentParser(prog="python -m fedlab.mcp", description=__doc__.splitlines()[0])
    add_config_args(p, DEFAULT_CONFIG)
    p.add_argument("--max-top-k", type=int, default=Limits.max_top_k, help="largest top_k a caller may ask for")
    p.add_argument("--max-query-chars", type=int, default=Limits.max_query_chars, help="longest query accepted")
    p.add_argument("--log-level", default="INFO", choices=("DEBUG", "INFO", "WARNING", "ERROR"))
    args = p.parse_args(argv)
    if args.max_top_k < 1 or args.max_query_chars < 1:
        p.error("--max-top-k and --max-query-chars must be positive")
    return args


def main(argv: list[str] | None = None) -> None:
    from fedlab.mcp.server import open_server, run_stdio, stdout_to_stderr

    args = parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=args.log_level,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    with stdout_to_stderr():  # stdout is the protocol channel: nothing else may reach it
        server = open_server(config_from_args(args), Limits(args.max_top_k, args.max_query_chars), args.config)
    logging.getLogger("fedlab.mcp").info("serving %s on stdio", SERVER_NAME)
    run_stdio(server)


if __name__ == "__main__":
    run_cli(main)
