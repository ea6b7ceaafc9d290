"""What every skill is: a name, whether it applies to a question, what it reads, and its answer.

A skill reads a QuestionFrame (fedlab.query.frame) and the passages the agent handed over,
formatted "[Source N] title, date[, section]" (fedlab.skills.passages), and answers with cited
lines — every sentence followed by the [Source N] it was read from — or None when it has nothing
to say. Its ``needs`` names the passages it reads: the retrieved ones, or those the agent adds
from the meeting timeline under a section of their own. Its ``answer`` may take passages out of
what the skills after it read (``rest``: the records it has said) and name the sentences the
sentence reader must not say again (``said``). The order is fedlab.skills.registry's.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Protocol

from fedlab.query.frame import QuestionFrame


@dataclass(frozen=True)
class SkillAnswer:
    text: str  # cited lines; "" when the skill found nothing to say (its ``rest`` still counts)
    rest: list[str]  # the passages left for the skills after it
    said: Callable[[str], bool] | None = None  # sentences of ``rest`` the reader leaves out


class Skill(Protocol):
    name: str  # recorded as the answer's ``skill`` (ask --json, agent_answers.jsonl, skill.<name>.* metrics)
    needs: str  # the passages it reads: "retrieved passages" or the section the agent adds them under

    def applies(self, frame: QuestionFrame) -> bool:
        """Whether the question is one this skill answers (its words only; the passages are not read)."""

    def answer(self, frame: QuestionFrame, passages: list[str]) -> SkillAnswer | None:
        """The cited answer from ``passages``; None when they hold nothing this skill can say."""
