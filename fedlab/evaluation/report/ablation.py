"""What each answer skill earns: its questions answered with it and with it switched off.

``ablate(report, config)`` reads a report's per-set answers (``report.json``'s sets, each run's
agent_answers.jsonl), takes the questions each skill answered in (its ``skills``), and answers
them again with ``lm.skills_off=[skill]`` — the reader in its place — and once more as the
report's config does, both with one pipeline. Per skill and role: how often it fires, how many of
those answers are right with it and without it, and the answers only one arm gets right. A skill
that is right no more often than the reader in its place does not earn its keep.
"""
from __future__ import annotations

import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from fedlab.errors import FedlabError

READER = "reader"  # the fallback: answers whatever no skill does, never switched off


@dataclass
class SkillRow:
    fires: int = 0  # questions the skill answered in (its ``skills``)
    right_on: int = 0  # of those, right as the config answers
    right_off: int = 0  # of those, right with the skill switched off
    only_on: int = 0  # right only with the skill
    only_off: int = 0  # right only without it


@dataclass
class Ablation:
    config: str
    report: str  # the report's git commit and date
    rows: dict[str, dict[str, SkillRow]] = field(default_factory=dict)  # skill -> role -> row

    def to_json(self) -> dict:
        return {"config": self.config, "report": self.report,
                "skills": {s: {r: asdict(row) for r, row in roles.items()} for s, roles in self.rows.items()}}

    def to_markdown(self) -> str:
        lines = [f"# What each skill earns: `{self.config}`", "",
                 f"Questions each skill answered in the report of {self.report}, answered again with the skill "
                 "switched off (`lm.skills_off=[skill]`, the reader in its place).", "",
                 "| skill | role | fires | right with | right without | only with | only without |",
                 "|---|---|---:|---:|---:|---:|---:|"]
        for skill, roles in sorted(self.rows.items()):
            for role, r in roles.items():
                lines.append(f"| {skill} | {role} | {r.fires} | {r.right_on} | {r.right_off} | {r.only_on} | {r.only_off} |")
        return "\n".join(lines) + "\n"


def fired_questions(report: dict, roles: tuple[str, ...]) -> dict[str, list[tuple[str, str, object]]]:
    """skill -> [(role, set name, Question)] for every question a skill answered in, in ``report``."""
    from fedlab.dataset.registry import registered, select_ids
    from fedlab.evaluation.report.changed import run_answers
    from fedlab.evaluation.retrieval.harness import load_split

    fired: dict[str, list] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for i, s in enumerate(report.get("sets", [])):
            if s.get("role") not in roles:
                continue
            spec = s.get("local_dir") if s.get("local_dir") and Path(s["local_dir"]).is_dir() else s.get("run_id")
            rows = run_answers(str(spec), Path(tmp) / str(i)) if spec else None
            if rows is None:
                raise FedlabError(f"the report's set {s.get('name')!r} has no agent answers: report a config with the agent")
            reg = registered(s["name"])
            questions = {q.id: q for q in select_ids(load_split(reg.path, reg.split), reg.ids, reg.path)}
            for row in rows:
                for skill in row.get("skills") or ():
                    if skill != READER and row["id"] in questions:
                        fired.setdefault(skill, []).append((s["role"], s["name"], questions[row["id"]]))
    return fired


def ablate(report_path: str | Path, config: str = "production", overrides: tuple[str, ...] = (),
           roles: tuple[str, ...] = ("dev", "heldout"), progress: bool = True) -> Ablation:
    """The Ablation of every skill that fired in ``report_path``'s sets of ``roles``."""
    import json

    from fedlab.agent.build import build_agent
    from fedlab.agent.searcher import open_direct
    from fedlab.agent.settings import compose_with_agent
    from fedlab.evaluation.answers.measures import judge_answer
    from fedlab.pipeline import build_pipeline
    from fedlab.progress import progress as bar

    try:
        report = json.loads(Path(report_path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise FedlabError(f"{report_path} is not a readable report ({type(exc).__name__}): run "
                          "`python -m fedlab.report` first, or pass --report FILE") from None
    fired = fired_questions(report, roles)
    base = compose_with_agent(config, list(overrides))
    pipeline = build_pipeline(base, progress=progress)

    def right(off: list[str], items: list) -> dict[tuple[str, str], bool]:
        cfg = compose_with_agent(config, [*overrides, f"lm.skills_off=[{','.join(off)}]"])
        agent = build_agent(cfg, search=open_direct(cfg, pipeline))
        out = {}
        with bar(f"skills off: {','.join(off) or 'none'}", len(items), "questions", progress) as advance:
            for _, name, q in items:
                out[(name, q.id)] = bool(judge_answer(q, agent(q.question), (), {}).answer_correct)
                advance()
        return out

    every = list({(n, q.id): (r, n, q) for items in fired.values() for r, n, q in items}.values())
    on = right([], every)
    result = Ablation(config, f"{str(report.get('git_commit', ''))[:7]} ({report.get('created', '')})")
    for skill, items in sorted(fired.items()):
        off = right([skill], items)
        rows = {}
        for role in roles:
            keys = [(n, q.id) for r, n, q in items if r == role]
            rows[role] = SkillRow(len(keys), sum(on[k] for k in keys), sum(off[k] for k in keys),
                                  sum(on[k] and not off[k] for k in keys), sum(off[k] and not on[k] for k in keys))
        result.rows[skill] = rows
    return result
