"""The README's results box, generated from a report (``python -m fedlab.report --readme``).

``results_block(data)`` renders report.json's per-role pooled measures (answer accuracy, false
abstention, abstention accuracy, recall@10, ECE, each with its 95% interval) and the report's git
commit and date; ``update_readme`` replaces only the text between ``MARK_START`` and ``MARK_END``
in README.md, atomically. Nothing else writes README.md. The report: docs/datasets-and-protocol.md.
"""
from __future__ import annotations

import json
from pathlib import Path

from fedlab.errors import FedlabError
from fedlab.evaluation.report.render import cell

MARK_START = "<!-- results:start -->"
MARK_END = "<!-- results:end -->"
BOX = (("answer_accuracy", "answer accuracy"), ("false_abstention_rate", "false abstention"),
       ("abstention_accuracy", "abstention accuracy"), ("recall@10", "R@10"), ("ece", "ECE"))
ROLE_ORDER = ("dev", "heldout", "test", "train")


def load_report(path: Path) -> dict:
    """report.json's data, or one line saying how to make it."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FedlabError(f"{path} does not exist: run `make report` (python -m fedlab.report) first") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise FedlabError(f"{path} is not a readable report ({exc}): run `make report` again") from None
    missing = [k for k in ("pools", "git_commit", "created", "config") if k not in data]
    if missing:
        raise FedlabError(f"{path} lacks {', '.join(missing)}: it is not a report of `make report`; run it again")
    return data


def results_block(data: dict) -> str:
    """The box's markdown: one row per role pooled over its sets, in dev, heldout, test, train order."""
    rank = {role: i for i, role in enumerate(ROLE_ORDER)}
    roles = sorted(data["pools"], key=lambda r: (rank.get(r, len(ROLE_ORDER)), r))
    lines = [f"`{data['config']}` config, report of {str(data['created'])[:10]} at commit "
             f"`{str(data['git_commit'])[:7]}`; each measure pooled over the role's question sets, "
             "with its 95% bootstrap interval ([the report](docs/datasets-and-protocol.md), "
             "[the measures](docs/metrics.md)).", "",
             "| role | sets | questions | " + " | ".join(label for _, label in BOX) + " |",
             "|---|---|---:|" + "---:|" * len(BOX)]
    for role in roles:
        pool = data["pools"][role]
        overall = pool.get("overall", {})
        sets = ", ".join(pool.get("sets", []))
        lines.append(f"| {role} | {sets} | {overall.get('n', 0)} | "
                     + " | ".join(cell(overall.get(key)) for key, _ in BOX) + " |")
    lines += ["", "Regenerate: `make report`, then `make readme` (python -m fedlab.report --readme)."]
    return "\n".join(lines)


def replace_block(text: str, block: str) -> str:
    """``text`` with the lines between the two markers replaced by ``block``; the markers must be there once."""
    if text.count(MARK_START) != 1 or text.count(MARK_END) != 1 or text.index(MARK_START) > text.index(MARK_END):
        raise FedlabError(f"README.md must hold one {MARK_START} line before one {MARK_END} line: "
                          "put them back around the results box")
    head, rest = text.split(MARK_START, 1)
    _, tail = rest.split(MARK_END, 1)
    return f"{head}{MARK_START}\n{block}\n{MARK_END}{tail}"


def update_readme(readme: Path, report: Path) -> bool:
    """Rewrite README.md's results box from ``report``; True when the file changed."""
    from fedlab.io import write_text

    readme = Path(readme)
    try:
        text = readme.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FedlabError(f"{readme} does not exist: run from the checkout's root or pass --readme-file") from None
    new = replace_block(text, results_block(load_report(report)))
    if new == text:
        return False
    write_text(readme, new)
    return True
