"""The agent's language-model path as a ``dspy.Module``: assess → search → synthesize with
citations → validate.

``AgentModule`` owns the three predictors (``assess_query``, ``reformulate_query``,
``synthesize_answer``), each ``dspy.Predict`` or ``dspy.ChainOfThought`` of its signature
(fedlab.lm.signatures) as ``lm.predictor`` says. Its ``forward(question)`` runs the agent it is
bound to (fedlab.agent.program.AgentProgram.answer_with) with these predictors, so a DSPy
optimizer sees, traces and tunes the very predictors the agent calls; the search, the evidence
decisions and citation validation stay the agent's own Python. Its state (instructions, demos)
is what ``save``/``load`` write and read (DSPy's JSON state). Only a language-model backend
builds one: the extractive path never imports DSPy.
"""
from __future__ import annotations

from typing import Callable

import dspy

from fedlab.lm.signatures import signature_for
from fedlab.lm.steps import ASSESS_QUERY, REFORMULATE_QUERY, SYNTHESIZE_ANSWER, Step

PREDICTORS = {"predict": dspy.Predict, "chain_of_thought": dspy.ChainOfThought}
# the attribute that holds each step's predictor (its name in the saved state)
ATTRIBUTES = {ASSESS_QUERY: "assess_query", REFORMULATE_QUERY: "reformulate_query",
              SYNTHESIZE_ANSWER: "synthesize_answer"}


class _Shared:
    """A reference a module's copies share: DSPy optimizers deep-copy the program, and the agent
    behind it (its index, its models) is neither copyable nor a parameter."""

    def __init__(self, value):
        self.value = value

    def __deepcopy__(self, memo):
        return self


class AgentModule(dspy.Module):
    """assess → search → synthesize with citations → validate, its predictors of kind
    ``predictor`` (PREDICTORS). ``bind(run)`` sets what ``forward`` runs: ``run(question,
    steps)`` returns the agent's answer (fedlab.agent.types.AgentAnswer) drafted with ``steps``'
    predictors."""

    def __init__(self, predictor: str = "predict"):
        super().__init__()
        if predictor not in PREDICTORS:
            from fedlab.errors import FedlabError

            raise FedlabError(f"lm.predictor={predictor}: choose one of {', '.join(PREDICTORS)}")
        self.kind = predictor
        make = PREDICTORS[predictor]
        self.assess_query = make(signature_for(ASSESS_QUERY))
        self.reformulate_query = make(signature_for(REFORMULATE_QUERY))
        self.synthesize_answer = make(signature_for(SYNTHESIZE_ANSWER))
        self._run = _Shared(None)

    def step(self, step: Step):
        """The predictor of ``step`` (a fedlab.lm.steps.Step or its signature class)."""
        from fedlab.lm.steps import step_named

        return getattr(self, ATTRIBUTES[step_named(step)])

    def bind(self, run: Callable) -> "AgentModule":
        self._run.value = run
        return self

    def forward(self, question: str) -> dspy.Prediction:
        """The agent's answer as a Prediction: ``answer`` (with its [n] markers), ``abstained``,
        ``abstain_reason``, the cited chunk ids, and the whole AgentAnswer as ``agent_answer``."""
        if self._run.value is None:
            raise TypeError("AgentModule.forward needs an agent: bind(AgentProgram.answer_with) first")
        a = self._run.value(question, self)
        return dspy.Prediction(answer=a.answer, abstained=a.abstained, abstain_reason=a.abstain_reason,
                               cited=[c.chunk_id for c in a.citations], agent_answer=a)
