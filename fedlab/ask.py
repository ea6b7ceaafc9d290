"""`python -m fedlab.ask "question"`: one cited answer from the production config.

    python -m fedlab.ask "What did the Fed say about inflation in January 2024?"
    python -m fedlab.ask --config evaluate --set lm=anthropic "..."
    python -m fedlab.ask --json "..."

The config is composed with fedlab.config.compose; the `agent` and `lm` groups are switched
on (agent=default, lm=extractive) when the config leaves them out or null, so `--set lm=anthropic`
works either way. Exit codes: 0 answered or abstained; 2 bad input or config; 3 the answer
backend failed (the retrieved sources are still shown).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
import unicodedata

from fedlab.errors import FedlabError, utf8_problem

DEFAULT_CONFIG = "production"
MAX_QUESTION_CHARS = 1000
EXIT_USER = 2
EXIT_BACKEND = 3


def check_question(text: str, max_chars: int = MAX_QUESTION_CHARS) -> str:
    """The question, stripped; a FedlabError (one line) when it cannot be a question."""
    problem = utf8_problem(text)
    if problem is not None:
        raise FedlabError(f"the question is not valid UTF-8 text: {problem}; retype it as plain text "
                          "(or set the terminal's encoding to UTF-8)")
    question = text.strip()
    if not question:
        raise FedlabError("the question is empty: ask something, e.g. "
                          "\"What did the FOMC decide in January 2024?\"")
    if len(question) > max_chars:
        raise FedlabError(f"the question is {len(question)} characters long; the limit is {max_chars} "
                          "(--max-chars to change it)")
    if any(unicodedata.category(ch) == "Cc" and ch not in "\t\n" for ch in question):
        raise FedlabError("the question contains control characters: type it as plain text")
    if not any(ch.isalpha() for ch in question):
        raise FedlabError("the question has no words in it: ask in words")
    return " ".join(question.split())


def compose_config(config: str, sets: list[str]):
    from fedlab.agent.settings import compose_with_agent
    from fedlab.config import CONF_DIR

    if config == DEFAULT_CONFIG and not (CONF_DIR / f"{DEFAULT_CONFIG}.yaml").is_file():
        raise FedlabError("conf/production.yaml does not exist yet: run `make export` to write it, "
                          "or ask with --config evaluate")
    from fedlab.config import PIPELINE_GROUPS, require_keys

    cfg = compose_with_agent(config, sets)
    require_keys(cfg, PIPELINE_GROUPS, config)
    return cfg


class _ArgumentParser(argparse.ArgumentParser):
    """Usage mistakes as one FedlabError line (printed as `error: ...`, exit 2), not usage + error."""

    def error(self, message: str):
        raise FedlabError(f"{message} (see python -m fedlab.ask --help)")


def parse_args(argv: list[str] | None):
    p = _ArgumentParser(prog="python -m fedlab.ask", description="Ask the FOMC documents a question.")
    p.add_argument("question", help="the question, in quotes")
    p.add_argument("--config", default=DEFAULT_CONFIG,
                   help="a config name in conf/ or a path to a YAML config (default: production)")
    p.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                   help="a config override, repeatable (e.g. --set lm=anthropic --set agent.transport=mcp)")
    p.add_argument("--json", action="store_true", help="print the answer as one JSON object")
    p.add_argument("--max-chars", type=int, default=MAX_QUESTION_CHARS, help="longest question accepted")
    return p.parse_args(argv)


def json_answer(answer, total_ms: float) -> dict:
    return {
        "answer": answer.answer,
        "abstained": answer.abstained,
        "confidence": answer.confidence,
        "confidence_level": answer.confidence_level,
        "abstain_reason": answer.abstain_reason,
        "coverage_note": answer.coverage_note,
        "citations": [{"n": c.n, "doc_id": c.doc_id, "chunk_id": c.chunk_id, "title": c.title,
                       "meeting_date": c.meeting_date, "section": c.section} for c in answer.citations],
        "latency_ms": round(total_ms, 1),
    }


def _wants_json(argv: list[str]) -> bool:
    """--json among the options (not after `--`), for errors raised before the arguments parse."""
    options = argv[:argv.index("--")] if "--" in argv else argv
    return "--json" in options


def main(argv: list[str] | None = None) -> int:
    """Exit code; a user error is a FedlabError (one `error:` line on stderr, exit 2), and with
    --json also one JSON object on stdout: {"error": ..., "exit_code": 2}."""
    t0 = time.perf_counter()
    argv = sys.argv[1:] if argv is None else list(argv)
    as_json = _wants_json(argv)
    try:
        args = parse_args(argv)
        as_json = args.json
        return _answer(args, t0)
    except FedlabError as exc:
        if as_json:
            print(json.dumps({"error": str(exc), "exit_code": EXIT_USER}), flush=True)
        raise


def _answer(args: argparse.Namespace, t0: float) -> int:
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # model-loading bars would clutter the answer
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    question = check_question(args.question, args.max_chars)
    cfg = compose_config(args.config, args.sets)

    from fedlab.agent.build import build_agent, build_backend, require_groups, settings_from
    from fedlab.agent.searcher import open_search
    from fedlab.lm.base import LMUnavailable

    require_groups(cfg)
    search = open_search(cfg, settings_from(cfg).transport)
    try:
        try:
            agent = build_agent(cfg, search=search, backend=build_backend(cfg))
            try:
                answer = agent(question)
            except OverflowError:  # a date read from the question, widened past date.max / date.min
                raise FedlabError("a date in the question is out of range: ask about dates between "
                                  "1900 and 2200") from None
        except LMUnavailable as exc:
            from fedlab.agent.render import print_sources_only

            print(f"error: {exc}", file=sys.stderr)
            result = search.searcher.search(question)
            if args.json:
                print(json.dumps({"error": str(exc), "exit_code": EXIT_BACKEND, "retrieved": [
                    {"doc_id": h.chunk.doc_id, "chunk_id": h.chunk.chunk_id, "meeting_date": h.chunk.meeting_date,
                     "section": h.chunk.section} for h in result.hits]}))
            else:
                print_sources_only(result.hits, search.document)
            return EXIT_BACKEND
    finally:
        search.close()
    total_ms = (time.perf_counter() - t0) * 1000
    if args.json:
        print(json.dumps(json_answer(answer, total_ms)))
    else:
        from fedlab.agent.render import print_answer

        print_answer(answer, agent.backend.describe(), total_ms)
    return 0


def run(argv: list[str] | None = None) -> None:
    from fedlab.cli import run_cli

    code = 0

    def _main():
        nonlocal code
        code = main(argv)

    run_cli(_main)
    sys.exit(code)


if __name__ == "__main__":
    run()
