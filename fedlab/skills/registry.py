"""The order of the skills, and the answer they make together.

- OPENING skills say what the records the agent added hold, in this order, each on the passages
  the one before left: when the statements said something (said_run), the votes, the
  balance-sheet actions. Their lines open the answer.
- ANSWERING skills compose the rest of the answer: the first that answers, in this order — how
  long the range was held, the rate path, an administered rate's path.
- When none does, BESIDE_READER skills open the answer too (an administered rate's value at one
  meeting) and the sentence reader (fedlab.skills.reader) picks the rest — its rule 0 being the
  statement changes.

The answer's lines are laid out in LAYOUT order, the composed rest last. Its ``skill`` is the
first skill in CREDIT order that said something — the composing skill, then the most specific
record — else ``statement_changes`` or the reader; ``skills`` lists every one that did.
"""
from __future__ import annotations

from fedlab.query.frame import QuestionFrame
from fedlab.skills import administered_path, administered_values, balance_sheet, hold_run, rate_path, said_runs, votes
from fedlab.skills.reader import SentenceReader

OPENING = (said_runs.SKILL, votes.SKILL, balance_sheet.SKILL)
ANSWERING = (hold_run.SKILL, rate_path.SKILL, administered_path.SKILL)
BESIDE_READER = (administered_values.SKILL,)
LAYOUT = ("votes", "said_run", "balance_sheet", "administered_values")
CREDIT = ("votes", "balance_sheet", "administered_values", "said_run")  # after the composing skill
READER, CHANGES = "reader", "statement_changes"


NAMES = tuple(s.name for s in (*OPENING, *ANSWERING, *BESIDE_READER)) + (CHANGES,)  # what may be switched off


def answer(frame: QuestionFrame, passages: list[str], reader: SentenceReader, off: frozenset[str] = frozenset()) -> dict:
    """{"answer", "composed", "skill", "skills"} for the question ``frame`` reads. ``composed``:
    the answer holds a part composed from records (a skill other than the reader's plain sentences).
    ``off``: skills (of NAMES) left out, as if they never applied — the reader answers in their place."""
    said: dict[str, str] = {}
    leave_out = []  # the reader's: sentences an opening skill said
    for skill in _on(OPENING, off):
        got = skill.answer(frame, passages) if skill.applies(frame) else None
        if got is None:
            continue
        passages = got.rest
        if got.text:
            said[skill.name] = got.text
        if got.said is not None:
            leave_out.append(got.said)
    composed, by = "", None
    for skill in _on(ANSWERING, off):
        got = skill.answer(frame, passages) if skill.applies(frame) else None
        if got is not None and got.text:
            composed, by = got.text, skill.name
            break
    if not composed:
        for skill in _on(BESIDE_READER, off):
            got = skill.answer(frame, passages) if skill.applies(frame) else None
            if got is not None and got.text:
                said[skill.name] = got.text
    opened = [name for name in LAYOUT if name in said]
    if composed or set(said) - {said_runs.SKILL.name}:
        rest = composed or reader.answer(frame, passages, _any(leave_out), changes=CHANGES not in off)[0]
        credited = ([by] if composed else []) + [name for name in CREDIT if name in said]
        lines = [said[name] for name in opened] + ([rest] if rest else [])
        return {"answer": " ".join(lines), "composed": True, "skill": credited[0],
                "skills": credited + ([] if composed else [READER])}
    rest, changes = reader.answer(frame, passages, changes=CHANGES not in off)
    credited = [name for name, part in ((said_runs.SKILL.name, said.get(said_runs.SKILL.name)), (CHANGES, changes))
                if part] + [READER]
    run = said.get(said_runs.SKILL.name, "")
    return {"answer": " ".join(a for a in (run, rest) if a), "composed": bool(run or changes),
            "skill": credited[0], "skills": credited}


def _on(skills: tuple, off: frozenset[str]) -> tuple:
    return tuple(skill for skill in skills if skill.name not in off)


def check_names(names) -> frozenset[str]:
    """``lm.skills_off`` as a set of skill names; one line naming the skills when one is unknown."""
    unknown = sorted(set(names) - set(NAMES))
    if unknown:
        from fedlab.errors import FedlabError

        raise FedlabError(f"lm.skills_off names {', '.join(map(repr, unknown))}, no skill: use some of {', '.join(NAMES)}")
    return frozenset(names)


def _any(tests: list):
    """One test of a sentence from several: true when any is; None when there are none."""
    if not tests:
        return None
    return lambda sentence: any(test(sentence) for test in tests)
