"""`python -m fedlab.gate`: the production config on the test split against its regression record.

Exit codes: 0 every metric within its tolerance of the record (or better); 1 a metric below its
expected value minus the tolerance (each named); 2 the gate could not run (bad input or config, no
corpus, tracking store unreachable, any failure); 3 the corpus, dataset or split is not the one the
record (conf/gates.yaml) or the production config was measured on (``--allow-data-change`` gates
it anyway). A stale answerability model (fitted on other code or settings: fedlab.agent.fingerprint)
cannot run, exit 2, unless ``--allow-stale-model``. ``--set recall@5=0.9`` makes 0.9 recall@5's minimum (how CI proves the gate can fail);
``--record`` measures and rewrites the record (expected values and hashes; the tolerances kept).
"""
from __future__ import annotations

import sys
from pathlib import Path

from fedlab.cli import ArgumentParser, add_config_args, config_from_args
from fedlab.env import mask_credentials
from fedlab.errors import FedlabError

EXIT_PASS, EXIT_BREACH, EXIT_CANNOT_RUN, EXIT_DATA_CHANGED = 0, 1, 2, 3


def parse_args(argv: list[str] | None):
    parser = ArgumentParser(prog="python -m fedlab.gate", description=__doc__.splitlines()[0])
    add_config_args(parser, "production", example="eval.progress=false", positional=True)
    parser.add_argument("--gates", default=None, help="the regression record (default: conf/gates.yaml)")
    parser.add_argument("--split", default=None, help="dataset split to gate on (default: the record's, test)")
    parser.add_argument("--set", dest="gate_sets", action="append", default=[], metavar="METRIC=VALUE",
                        help="gate METRIC at minimum VALUE in this run")
    parser.add_argument("--allow-stale-model", action="store_true",
                        help="gate even if the answerability model was fitted on other code or settings")
    parser.add_argument("--allow-data-change", action="store_true",
                        help="gate even if the data differs from the record's or the production config's")
    parser.add_argument("--record", action="store_true", help="measure and rewrite the record (re-derive the gates)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    from fedlab.evaluation import gates

    try:
        args = parse_args(argv)
        path = Path(args.gates or gates.DEFAULT_RECORD)
        if args.record and args.gate_sets:
            raise FedlabError("--set changes one run's gates, --record writes measured values: use one of them")
        source = path if not args.record or path.is_file() else gates.DEFAULT_RECORD  # a new file: its metrics
        record = gates.read_record(source)
        cfg = config_from_args(args, [f"dataset.split={args.split or record.split}", "+gate=true"])
        if not args.allow_stale_model:
            refuse_stale_model(cfg)
        if args.record:
            new = gates.record_gates(cfg, record, path, gates.leading_comments(source), args.allow_data_change)
            gates.print_recorded(record if source == path else None, new, path)
            return EXIT_PASS
        outcome = gates.run_gate(cfg, record, path, args.gate_sets, args.allow_data_change)
    except gates.DataChanged as exc:
        print(f"gate refused: {exc}", file=sys.stderr)
        return EXIT_DATA_CHANGED
    except FedlabError as exc:
        print(f"error: the gate could not run: {mask_credentials(str(exc))}", file=sys.stderr)
        return EXIT_CANNOT_RUN
    except KeyboardInterrupt:
        raise
    except Exception as exc:  # noqa: BLE001 — "could not run" must never read as "breached"
        first = mask_credentials((str(exc).strip().splitlines() or [""])[0][:300])
        print(f"error: the gate could not run: {type(exc).__name__}: {first}", file=sys.stderr)
        return EXIT_CANNOT_RUN
    gates.print_gates(outcome, path)
    return EXIT_BREACH if outcome.failed else EXIT_PASS


def refuse_stale_model(cfg) -> None:
    """The gate holds a release to its record: a model fitted on other code or settings is refused."""
    from fedlab.agent.fingerprint import check_model

    if "agent" in cfg and cfg.agent is not None and cfg.agent.get("calibration"):
        check = check_model(cfg)
        if check.stale:
            raise FedlabError(f"the answerability model {check.line}")


if __name__ == "__main__":
    sys.exit(main())
