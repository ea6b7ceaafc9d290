"""The agent's language steps by name, inputs and outputs — without DSPy.

The program (fedlab.agent.program) asks its backend for a predictor per step. A language-model
backend answers with ``dspy.Predict`` over the step's DSPy signature (fedlab.lm.signatures,
imported only then); the extractive backend with plain functions, so answering a question with it
never imports DSPy (or litellm under it): seconds saved in a fresh process. The test suite
checks that these names and fields are the signatures'.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Step:
    name: str  # the DSPy signature's class name
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    # outputs a function backend may add that a language model does not give (not the signature's)
    extras: tuple[str, ...] = ()


ASSESS_QUERY = Step("AssessQuery", ("question", "today", "event"), ("intent", "date_from", "date_to", "scope"))
REFORMULATE_QUERY = Step("ReformulateQuery", ("question", "previous_query", "attempt"), ("query",))
# composed: the answer was composed from records (fedlab.skills.registry.answer), not picked;
# skill / skills: the rule that answered and every rule with a part in the answer
SYNTHESIZE_ANSWER = Step("SynthesizeAnswer", ("question", "passages"), ("answer",), ("composed", "skill", "skills"))
STEPS = (ASSESS_QUERY, REFORMULATE_QUERY, SYNTHESIZE_ANSWER)


class Prediction:
    """A step's outputs as attributes (what the program reads of a ``dspy.Prediction``)."""

    def __init__(self, **outputs):
        self.__dict__.update(outputs)

    def keys(self):
        return self.__dict__.keys()

    def __repr__(self) -> str:
        return f"Prediction({', '.join(f'{k}={v!r}' for k, v in self.__dict__.items())})"


def step_named(signature) -> Step:
    """The step a Step or a DSPy signature class (by its class name) stands for."""
    if isinstance(signature, Step):
        return signature
    name = getattr(signature, "__name__", str(signature))
    for step in STEPS:
        if step.name == name:
            return step
    raise TypeError(f"no agent step is called {name}")
