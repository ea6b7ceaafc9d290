"""The agent's DSPy signatures: what each language step reads and writes.

They are the contract between the agent (fedlab.agent.program) and its answer backends: every
backend in fedlab.lm answers these same signatures — dspy.Predict for language models,
deterministic predictors for the extractive backend — so the program never changes with it.
The program names them by their DSPy-free steps (fedlab.lm.steps); only a language-model backend
imports this module (and DSPy), through ``signature_for``.
"""
from __future__ import annotations

from typing import Literal

import dspy

INTENTS = ("fomc", "off_topic", "unclear")
SCOPE_CHOICES = ("none", "meeting", "month", "span", "year", "multi_year")


class AssessQuery(dspy.Signature):
    """Classify a question for a search over FOMC statements and minutes (2019 onward).

    intent: fomc when it asks about the Federal Reserve, monetary policy, the economy or
    financial markets as the FOMC discusses them; off_topic when it does not; unclear when it
    is too vague to search. Give the date range the question refers to as ISO dates (empty
    when it names no dates; date_from empty for an open start) and its scope: meeting (one
    meeting), month, span (several months), year, multi_year, or none.
    """

    question: str = dspy.InputField()
    today: str = dspy.InputField(desc="ISO date that ends open ranges such as 'since 2023'")
    event: str = dspy.InputField(desc="the meeting(s) the question names by an event, as resolved over the "
                                      "corpus's meeting timeline: 'DATE_FROM..DATE_TO SCOPE: how it was read', "
                                      "or empty; when set, it is the question's date range")
    intent: Literal["fomc", "off_topic", "unclear"] = dspy.OutputField()
    date_from: str = dspy.OutputField(desc="ISO date or empty")
    date_to: str = dspy.OutputField(desc="ISO date or empty")
    scope: Literal["none", "meeting", "month", "span", "year", "multi_year"] = dspy.OutputField()


class ReformulateQuery(dspy.Signature):
    """Rewrite a search query that found weak evidence in FOMC statements and minutes.

    Use the Committee's own vocabulary (e.g. 'target range for the federal funds rate',
    'inflation remains elevated'), keep the subject, and leave dates out: the date range is
    applied separately.
    """

    question: str = dspy.InputField()
    previous_query: str = dspy.InputField()
    attempt: int = dspy.InputField(desc="1 for the first rewrite, 2 for the second")
    query: str = dspy.OutputField()


class SynthesizeAnswer(dspy.Signature):
    """Answer the question only from the numbered passages of FOMC statements and minutes.

    Cite every claim with the passage it comes from as [Source N] (N = the passage's number;
    several as [Source 1, Source 3]). Quote the Committee's wording where it matters. If the
    passages do not answer the question, say so plainly and cite nothing.
    """

    question: str = dspy.InputField()
    passages: list[str] = dspy.InputField(desc="'[Source N] title, date, section: text', one per passage")
    answer: str = dspy.OutputField()


SIGNATURES = {cls.__name__: cls for cls in (AssessQuery, ReformulateQuery, SynthesizeAnswer)}


def signature_for(step) -> type[dspy.Signature]:
    """The DSPy signature of a step (fedlab.lm.steps.Step); a signature class is returned as is."""
    if isinstance(step, type) and issubclass(step, dspy.Signature):
        return step
    return SIGNATURES[step.name]
