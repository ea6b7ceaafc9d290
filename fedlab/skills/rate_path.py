"""Rate-path answers: the federal funds target range over several meetings, read from the passages.

Contract and design notes: docs/skills/rate_path.md#design-notes-fedlabskillsrate_pathpy.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from fedlab.facts.timeline import DECISION_RE, DIRECTIVE_RE, VERB_DIRECTION, bp, parse_number, size_bp
from fedlab.query.frame import QuestionFrame
from fedlab.query.lexicon import MONTH_NAMES
from fedlab.query.rate_path import YES_NO, asked_size, asks_rate_path
from fedlab.skills.base import SkillAnswer
from fedlab.skills.passages import cite_sources, passage_head
from fedlab.skills.wording import bp_text, count_word, in_label, meeting_labels, points_text, range_text, times_text

MAX_GAP_DAYS = 63  # scheduled meetings are at most eight weeks apart (56 days in 2019-2025)

# the minutes reproduce a statement of another (unscheduled) meeting: "approval of the statement
# below for release at 10:00 a.m. on March 3, 2020"
RELEASED_ON = re.compile(
    rf"statement\s+below\s+for\s+release\b[^\"“\n]{{0,80}}?\bon\s+(?P<m>{'|'.join(MONTH_NAMES)})\s+"
    r"(?P<d>\d{1,2}),\s+(?P<y>\d{4})", re.I)


# -- the decisions in the passages -----------------------------------------------------------------


@dataclass
class PassageDecision:
    date: str  # the meeting (ISO)
    source: int  # the passage's [Source N]
    via: str  # decision_sentence | directive
    from_statement: bool
    order: int  # passage position, then offset: lower is better-ranked
    direction: str | None  # raise | cut | hold from the verb; None for a directive
    low: float
    high: float
    stated_bp: int | None  # "by N" in the sentence
    stated_from: tuple[float, float] | None  # "from X" in the sentence


def _released_on(text: str, before: int) -> str | None:
    last = None
    for m in RELEASED_ON.finditer(text, 0, before):
        last = m
    if last is None:
        return None
    month = MONTH_NAMES.index(last.group("m").capitalize()) + 1
    try:
        return date(int(last.group("y")), month, int(last.group("d"))).isoformat()
    except ValueError:
        return None


def read_decisions(passages: list[str]) -> list[PassageDecision]:
    """One decision per meeting found in the passages (module docstring), in date order."""
    found: dict[str, PassageDecision] = {}

    def rank(d: PassageDecision) -> tuple:
        return (d.via != "decision_sentence", not d.from_statement, d.order)

    for i, passage in enumerate(passages):
        n, meeting, head, body = passage_head(passage, i)
        from_statement = "statement" in head.lower() and "minutes" not in head.lower()
        for via, pattern in (("decision_sentence", DECISION_RE), ("directive", DIRECTIVE_RE)):
            for m in pattern.finditer(body):
                day = _released_on(body, m.start()) or meeting
                if day is None:
                    continue
                verb = m.group("verb").lower()
                stated = size_bp(m.group("size"), m.group("unit")) if via == "decision_sentence" and m.group("size") \
                    else None
                frm = (parse_number(m.group("frm_lo")), parse_number(m.group("frm_hi"))) \
                    if via == "decision_sentence" and m.group("frm") else None
                d = PassageDecision(day, n, via, from_statement, i * 1_000_000 + m.start(),
                                    VERB_DIRECTION[verb] if via == "decision_sentence" else None,
                                    parse_number(m.group("to_lo")), parse_number(m.group("to_hi")), stated, frm)
                if day not in found or rank(d) < rank(found[day]):
                    found[day] = d
    return sorted(found.values(), key=lambda d: d.date)

# -- writing it ------------------------------------------------------------------------------------


@dataclass
class Step:
    decision: PassageDecision
    direction: str  # raise | cut | hold | unknown
    change_bp: int | None  # signed
    before: tuple[float, float] | None
    gap: bool = False  # the range it moved from is not the previous decision's: a change was missed


def days_between(a: str, b: str) -> int:
    """Days from ISO date ``a`` to ``b``."""
    return (date.fromisoformat(b) - date.fromisoformat(a)).days


def _steps(decisions: list[PassageDecision], start: tuple[float, float] | None) -> list[Step]:
    steps = []
    previous = start
    for d in decisions:
        before = d.stated_from
        if before is None and d.stated_bp is not None and d.direction in ("raise", "cut"):
            sign = 1 if d.direction == "raise" else -1
            before = (d.low - sign * d.stated_bp / 100, d.high - sign * d.stated_bp / 100)
        if before is None and d.direction == "hold":
            before = (d.low, d.high)
        if before is None:
            before = previous
        gap = previous is not None and before is not None and bp(before[0], previous[0]) != 0
        change = bp(d.low, before[0]) if before is not None else None
        if d.direction is not None:  # the verb says
            direction = d.direction
            sign = {"raise": 1, "cut": -1, "hold": 0}[direction]
            if change is not None and (change > 0) - (change < 0) != sign:  # the ranges disagree: a missed move
                change, gap = None, True
        elif change is not None:
            direction = "raise" if change > 0 else "cut" if change < 0 else "hold"
        else:
            direction = "unknown"
        steps.append(Step(d, direction, change, before, gap))
        previous = (d.low, d.high)
    return steps


def rate_path_answer(question: str, passages: list[str], kind: str | None = None, hint=None) -> str | None:
    """The composed rate-path answer (module docstring), or None when it does not apply or fewer
    than two decisions in the question's range are in the passages."""
    if hint is None:
        from fedlab.retrieval.dates import parse_date_hint

        hint = parse_date_hint(question)
    kind = kind or asks_rate_path(question, hint)
    if kind is None:
        return None
    decisions = read_decisions(passages)
    lo = hint.date_from if hint is not None else None
    hi = hint.widened_end(1) if hint is not None else None
    inside = [d for d in decisions if (lo is None or d.date >= lo) and (hi is None or d.date <= hi)]
    if len(inside) < 2:
        return None
    earlier = [d for d in decisions
               if lo is not None and d.date < lo and days_between(d.date, inside[0].date) <= MAX_GAP_DAYS]
    start = (earlier[-1].low, earlier[-1].high) if earlier else None
    steps = _steps(inside, start)
    complete = (not any(s.gap for s in steps)
                and all(days_between(a.date, b.date) <= MAX_GAP_DAYS for a, b in zip(inside, inside[1:]))
                and (lo is None or days_between(lo, inside[0].date) <= MAX_GAP_DAYS))
    labels = meeting_labels([d.date for d in inside])
    answer = _compose(question, hint, "path" if kind == "yes_no" else kind, steps, complete, labels,
                      earlier[-1] if earlier else None)
    return _yes_no(question, hint, steps, complete) + answer if kind == "yes_no" else answer


def _all_of(n: int) -> str:
    return "both" if n == 2 else f"all {count_word(n)}"


def _period(hint, steps: list[Step], labels: dict[str, str]) -> str:
    if hint is not None and hint.scope == "year" and hint.date_from:
        return f"In {hint.date_from[:4]}"
    return f"From {labels[steps[0].decision.date]} to {labels[steps[-1].decision.date]}"


def _yes_no(question: str, hint, steps: list[Step], complete: bool) -> str:
    """"Yes. " when a move of the kind the question's verb asks about is found, "No. " when none
    is and no meeting may be missing, else "": also when the range has no dated start ("between
    the pandemic cut and 2021": the decisions read run from the documents' first meeting, not
    from the event)."""
    if hint is None or hint.date_from is None:
        return ""
    m = YES_NO.search(question)
    asked = {"raise"} if m and m.group("raise") else {"cut"} if m and m.group("cut") else {"raise", "cut"}
    moved = any(s.direction in asked for s in steps)
    return "Yes. " if moved else "No. " if complete else ""


def _compose(question: str, hint, kind: str, steps: list[Step], complete: bool, labels: dict[str, str],
             earlier: PassageDecision | None) -> str:
    moves = {"raise": [s for s in steps if s.direction == "raise"], "cut": [s for s in steps if s.direction == "cut"]}
    # a directive that only maintains the range (a notation vote) links the chain but is no meeting's hold
    holds = [s for s in steps if s.direction == "hold" and s.decision.via == "decision_sentence"]
    first, last = steps[0], steps[-1]
    start = first.before
    end = (last.decision.low, last.decision.high)
    at_least = "" if complete else "at least "
    period = _period(hint, steps, labels)
    summary_sources = [earlier.source] if earlier is not None and start is not None else []
    summary_sources += [first.decision.source, last.decision.source]

    # the summary sentence: how often, how much, from where to where
    parts = []
    for direction, verb in (("raise", "raised"), ("cut", "lowered")):
        group = moves[direction]
        if not group:
            continue
        text = f"{verb} the target range for the federal funds rate " if not parts else f"{verb} it "
        text += f"{at_least}{times_text(len(group))}"
        sizes = [abs(s.change_bp) for s in group if s.change_bp is not None]
        if len(sizes) == len(group) and len(set(sizes)) == 1 and len(group) > 1:
            text += f", each by {bp_text(sizes[0])} ({points_text(sizes[0])})"
        total = None
        if len(sizes) == len(group) and complete:
            total = sum(sizes)
        elif start is not None and not (moves["raise"] and moves["cut"]):
            total = abs(bp(end[0], start[0]))  # one direction: the distance travelled, whatever was missed
        if total:
            text += f", by {bp_text(total)} ({points_text(total)}) in total"
        parts.append(text)
    if not parts:
        ranges = {(s.decision.low, s.decision.high) for s in steps}
        if len(ranges) == 1:
            summary = (f"{period} the Committee kept the target range for the federal funds rate at "
                       f"{range_text(*end)} at {_all_of(len(holds) or len(steps))} meetings whose decisions the "
                       f"sources show ({labels[first.decision.date]} to {labels[last.decision.date]}); it did not "
                       f"move the range {cite_sources(summary_sources)}.")
            return summary
        parts.append("changed the target range for the federal funds rate")
    summary = f"{period} the Committee " + " and ".join(parts)
    if start is not None:
        summary += f", from {range_text(*start)} to {range_text(*end)}"
        if moves["raise"] and moves["cut"] and complete:
            net = bp(end[0], start[0])
            if net:
                summary += f", a net {'increase' if net > 0 else 'decrease'} of {bp_text(abs(net))}"
    else:
        summary += f", to {range_text(*end)}"
    peak = max(steps, key=lambda s: (s.decision.high, s.decision.date))
    if moves["raise"] and (peak.decision.low, peak.decision.high) != end:
        peaked = in_label(labels[peak.decision.date])
        summary += f", peaking at {range_text(peak.decision.low, peak.decision.high)} {peaked}"
    summary += f" {cite_sources(summary_sources)}."
    size = asked_size(question) if kind == "which" else None
    if size is not None:
        matching = [s for s in moves["raise"] + moves["cut"] if s.change_bp is not None and abs(s.change_bp) == size]
        matching.sort(key=lambda s: s.decision.date)
        if matching:
            dates = [labels[s.decision.date] for s in matching]
            listed = dates[0] if len(dates) == 1 else ", ".join(dates[:-1]) + " and " + dates[-1]
            unsized = any(s.change_bp is None for s in moves["raise"] + moves["cut"])
            among = " (of the moves whose size the sources show)" if unsized else ""
            summary += (f" The moves of {bp_text(size)} ({points_text(size)}){among} were {in_label(listed)} "
                        f"{cite_sources([s.decision.source for s in matching])}.")
    if len(holds) and kind == "count":
        n = len(holds)
        others = "the one other meeting" if n == 1 else f"the other {count_word(n)} meetings"
        when = ", ".join(labels[s.decision.date] for s in holds)
        summary += f" It held the range at {others} ({when}) {cite_sources([s.decision.source for s in holds])}."

    # one clause per change (and per run of holds in a path answer), in date order, each cited
    clauses = []
    run: list[Step] = []

    def close_run():
        if not run:
            return
        lo_label, hi_label = labels[run[0].decision.date], labels[run[-1].decision.date]
        when = lo_label if len(run) == 1 else f"{lo_label} to {hi_label} ({count_word(len(run))} meetings)"
        clauses.append(f"{when}: held at {range_text(run[0].decision.low, run[0].decision.high)} "
                       f"{cite_sources([run[0].decision.source, run[-1].decision.source])}")
        run.clear()

    for s in steps:
        if s.direction == "hold":
            if kind != "count" and s.decision.via == "decision_sentence":
                if run and (run[-1].decision.low, run[-1].decision.high) != (s.decision.low, s.decision.high):
                    close_run()
                run.append(s)
            continue
        close_run()
        verb = {"raise": "raised", "cut": "lowered"}.get(s.direction, "set")
        by = f" by {points_text(abs(s.change_bp))} ({bp_text(abs(s.change_bp))})" if s.change_bp else ""
        clauses.append(f"{labels[s.decision.date]}: {verb}{by} to {range_text(s.decision.low, s.decision.high)} "
                       f"{cite_sources([s.decision.source])}")
    close_run()
    if not clauses:
        return summary
    return summary + " " + "; ".join(clauses) + "."


class RatePath:
    """The federal funds target range over several meetings (module docstring), from the decision
    sentences of the retrieved passages."""

    name = "rate_path"
    needs = "retrieved passages"

    def applies(self, frame: QuestionFrame) -> bool:
        return frame.rate_path is not None

    def answer(self, frame: QuestionFrame, passages: list[str]) -> SkillAnswer | None:
        text = rate_path_answer(frame.question, passages, kind=frame.rate_path, hint=frame.hint)
        return SkillAnswer(text, passages) if text else None


SKILL = RatePath()
