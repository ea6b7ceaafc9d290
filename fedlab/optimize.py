"""`python -m fedlab.optimize`: compile the agent's DSPy program with a DSPy optimizer on dev questions.

    python -m fedlab.optimize lm=openai_compatible lm.api_base=http://127.0.0.1:11434/v1 lm.model=llama3.2
    python -m fedlab.optimize lm=anthropic optimize.optimizer=mipro_v2_light
    python -m fedlab.optimize experiment=lm_optimizer          # lm x optimizer, one run each

The Hydra app over fedlab.evaluation.optimize_run (config conf/optimize.yaml): the program is
saved as JSON (models/programs/<lm>-<optimizer>.json by default) and logged to MLflow with its
figures before and after on dev and heldout; `agent.program=PATH` loads it in evaluate, report
and ask. Exit codes: 0 compiled, 2 a user error (one line on stderr).
"""
from __future__ import annotations

import fedlab.config  # noqa: F401  (resolvers, telemetry defaults)
import hydra
from omegaconf import DictConfig

from fedlab.cli import run_cli, user_errors


@hydra.main(version_base="1.3", config_path="../conf", config_name="optimize")
@user_errors
def main(cfg: DictConfig) -> float:
    from rich.console import Console

    from fedlab.evaluation.optimize_run import optimize, print_result

    console = Console(stderr=True)
    console.width = max(console.width, 110)  # the figures table, also in a log file
    result = optimize(cfg, console)
    print_result(result, console)
    return float(result.figures.get("dev.after.score", 0.0))


if __name__ == "__main__":
    run_cli(main)
