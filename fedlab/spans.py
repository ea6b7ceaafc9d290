"""Span hooks: where the evaluation harness, ``ask`` and the agent mark the steps of answering
one question, so that a recorder can observe them.

Nothing here imports MLflow. With no recorder installed (``recording``), ``question`` and
``step`` yield ``NULL``, a span that ignores what it is given, for the cost of a context-variable
lookup: the agent answers exactly as it would without them. ``fedlab.tracing.Tracer`` is the
recorder that turns them into MLflow traces (one per question, linked to the evaluation's run):
it keeps them in memory while the questions are answered, and writes them when told the timed
work is done (``release``).

    with spans.question(q.id, q.question) as root:       # the trace's root (harness, ask)
        with spans.step("search", "RETRIEVER", {"query": query}) as span:   # a step (agent)
            result = searcher.search(query)
            span.retrieved(result)
        root.set_outputs({...})
        root.assess([("correct", True, "every key fact")])

``kind`` is one of MLflow's span types by name (AGENT, CHAIN, RETRIEVER, LLM, PARSER, TOOL, ...).
"""
from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Iterator, Sequence

# (name, value, rationale) of a per-question measure: an assessment of the trace
Measure = tuple[str, Any, "str | None"]


class Span:
    """A span that records nothing (``recording`` False): what the hooks yield with no recorder,
    or for a question the recorder leaves out (``eval.traces: sample``)."""

    recording = False

    def set_inputs(self, inputs: Any) -> None:
        pass

    def set_outputs(self, outputs: Any) -> None:
        pass

    def set_attributes(self, attributes: dict[str, Any]) -> None:
        pass

    def retrieved(self, result: Any) -> None:
        """The passages a search returned (a fedlab.retrieval.types.RetrievalResult), as the span's documents."""

    def assess(self, measures: Sequence[Measure]) -> None:
        """Per-question measures, judged on the answer (a root span's): feedback on its trace."""

    def expect(self, expectations: Sequence[Measure]) -> None:
        """What the question set says the answer should be (a root span's): expectations on its trace."""


NULL = Span()
_installed: ContextVar[Any] = ContextVar("fedlab_span_recorder", default=None)
_active: ContextVar[Any] = ContextVar("fedlab_span_active", default=None)


@contextmanager
def recording(recorder: Any) -> Iterator[Any]:
    """``recorder`` observes the questions answered inside (None: none does). It has
    ``wants(qid) -> bool`` and ``root(name, kind, inputs)`` / ``span(name, kind, inputs)``,
    context managers yielding a Span."""
    token = _installed.set(recorder)
    try:
        yield recorder
    finally:
        _installed.reset(token)


def installed() -> Any:
    return _installed.get()


@contextmanager
def question(qid: str | None, text: str, kind: str = "AGENT", name: str = "question") -> Iterator[Span]:
    """The root span of one question's trace; the steps inside it are its children. A question
    inside another is not a trace of its own."""
    recorder = _installed.get()
    if recorder is None or _active.get() is not None or not recorder.wants(qid):
        yield NULL
        return
    token = _active.set(recorder)
    try:
        with recorder.root(name, kind, {"question": text, "id": qid}) as span:
            yield span
    finally:
        _active.reset(token)


@contextmanager
def step(name: str, kind: str = "CHAIN", inputs: dict[str, Any] | None = None) -> Iterator[Span]:
    """One step of answering a question that is being recorded (else ``NULL``)."""
    recorder = _active.get()
    if recorder is None:
        yield NULL
        return
    with recorder.span(name, kind, inputs) as span:
        yield span


def release() -> None:
    """The timed work is done: the installed recorder may write what it recorded (a recorder that
    writes as it goes has nothing to do)."""
    recorder = _installed.get()
    if recorder is not None and hasattr(recorder, "emit"):
        recorder.emit()
