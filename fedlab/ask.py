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

import json
import os
import sys
import time

from fedlab.agent.answering import DEFAULT_CONFIG, MAX_QUESTION_CHARS
from fedlab.cli import ArgumentParser, add_config_args, config_from_args, run_exit
from fedlab.env import mask_credentials
from fedlab.errors import FedlabError

EXIT_USER = 2
EXIT_BACKEND = 3


def parse_args(argv: list[str] | None):
    p = ArgumentParser(prog="python -m fedlab.ask", description="Ask the FOMC documents a question.")
    p.add_argument("question", help="the question, in quotes")
    add_config_args(p, DEFAULT_CONFIG, example="lm=anthropic --set agent.transport=mcp")
    p.add_argument("--json", action="store_true", help="print the answer as one JSON object")
    p.add_argument("--max-chars", type=int, default=MAX_QUESTION_CHARS, help="longest question accepted")
    p.add_argument("--trace", action="store_true",
                   help="record the answer as an MLflow trace (its steps, searches and passages) in the config's "
                        "tracking store: MLFLOW_TRACKING_URI, else mlflow.tracking_uri (the local mlflow.db)")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Exit code; a user error is a FedlabError (one `error:` line on stderr, exit 2), and with
    --json also one JSON object on stdout: {"error": ..., "exit_code": 2}."""
    from fedlab.agent.answering import answer_question, check_question, compose_config

    t0 = time.perf_counter()
    argv = sys.argv[1:] if argv is None else list(argv)
    options = argv[:argv.index("--")] if "--" in argv else argv  # --json before the arguments parse
    as_json = "--json" in options
    try:
        args = parse_args(argv)
        as_json = args.json
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # model-loading bars would clutter the answer
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        question = check_question(args.question, args.max_chars)
        cfg = config_from_args(args, compose=compose_config)
        if args.trace:
            from fedlab.tracing import traced_ask

            with traced_ask(cfg) as tracer:
                result = answer_question(cfg, question)
            for trace_id in tracer.trace_ids.values():
                print(f"trace {trace_id} in experiment {cfg.mlflow.experiment!r} at {tracer.shown_uri}",
                      file=sys.stderr)
        else:
            result = answer_question(cfg, question)
    except FedlabError as exc:
        if as_json:
            print(json.dumps({"error": mask_credentials(str(exc)), "exit_code": EXIT_USER}), flush=True)
        raise
    total_ms = (time.perf_counter() - t0) * 1000
    if result.backend_error is not None:
        from fedlab.agent.render import print_sources_only

        print(f"error: {result.backend_error}", file=sys.stderr)
        if args.json:
            print(json.dumps({"error": result.backend_error, "exit_code": EXIT_BACKEND,
                              "retrieved": result.retrieved_json()}))
        else:
            print_sources_only(result.hits, result.documents.get)
        return EXIT_BACKEND
    if args.json:
        print(json.dumps(result.to_json(total_ms)))
    else:
        from fedlab.agent.render import print_answer

        print_answer(result.answer, result.backend, total_ms)
    return 0


if __name__ == "__main__":
    run_exit(main)
