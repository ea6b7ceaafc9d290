"""The extractive backend: deterministic answers built from the retrieved sentences, no language model.

Contract and design notes: docs/skills/reader.md#design-notes-fedlablmextractivepy.
"""
from __future__ import annotations

import contextlib
import re
from datetime import date
from typing import Callable, Iterator

from fedlab.index.tokens import Tokenizer, stem
from fedlab.lm.steps import ASSESS_QUERY, REFORMULATE_QUERY, SYNTHESIZE_ANSWER, Prediction, step_named
from fedlab.query.lexicon import FOMC_VOCABULARY, QUESTION_WORDS, VOCABULARY_EXPANSIONS
from fedlab.retrieval.dates import date_expressions
from fedlab.skills.reader import Abbreviations, abbreviation_terms

TOKENS = Tokenizer()


def assess_query(question: str, today: str, event: str = "") -> dict:
    """Intent from the FOMC vocabulary; the date range from the resolved event when there is one
    (fedlab.retrieval.events), else from the date parser."""
    from fedlab.retrieval.dates import parse_date_hint
    from fedlab.retrieval.events import described_hint

    parsed = parse_date_hint(question, today=date.fromisoformat(today) if today else None)
    hint = described_hint(event) or parsed
    terms = set(TOKENS(question))
    if parsed is not None:
        date_words = set(TOKENS(parsed.text))
        terms -= date_words
    if terms & FOMC_VOCABULARY:
        intent = "fomc"
    elif hint is not None or not terms:
        intent = "unclear"
    else:
        intent = "off_topic"
    return {"intent": intent, "date_from": (hint.date_from or "") if hint else "",
            "date_to": (hint.date_to or "") if hint else "", "scope": hint.scope if hint else "none"}


def reformulate_query(question: str, previous_query: str, attempt: int) -> dict:
    from fedlab.retrieval.dates import parse_date_hint

    dated = set(TOKENS(date_expressions(parse_date_hint(question))))  # the range's dates, not the words between
    words = [w for w in re.findall(r"[A-Za-z][A-Za-z'-]*|\d+(?:[.,/-]\d+)*", question)
             if stem(w.lower()) not in QUESTION_WORDS and (toks := TOKENS(w)) and not set(toks) <= dated]
    query = " ".join(words)
    if attempt >= 2:
        extra = [VOCABULARY_EXPANSIONS[t] for t in dict.fromkeys(TOKENS(query)) if t in VOCABULARY_EXPANSIONS]
        query = " ".join([query, *extra])
    query = query.strip() or previous_query
    return {"query": query}


def synthesize_answer(question: str, passages: list[str], max_sentences: int = 3,
                      abbreviations: Abbreviations = (), rank_weight: float = 0.0,
                      report_weight: float = 1.0, ranker=None, restated=None,
                      skills_off: frozenset[str] = frozenset()) -> dict:
    """The skills' answer (fedlab.skills.registry.answer) with the sentence reader set as given
    (``ranker``: a fedlab.skills.sentence_ranker.SentenceRanker; ``restated(a, b)``: a sentence
    restating one said is left out), ``skills_off`` left out."""
    from fedlab.query.frame import frame_of
    from fedlab.skills.reader import SentenceReader
    from fedlab.skills.registry import answer

    reader = SentenceReader(max_sentences, abbreviations, rank_weight, report_weight, ranker=ranker,
                            restated=restated)
    return answer(frame_of(question), passages, reader, skills_off)


class SignaturePredictor:
    """A predictor for one step: the step's inputs in, a Prediction with its outputs out.
    ``signature``: a fedlab.lm.steps.Step, or the DSPy signature class of one."""

    def __init__(self, signature, fn: Callable[..., dict]):
        self.step = step_named(signature)
        self.fn = fn

    def __call__(self, **inputs):
        expected = set(self.step.inputs)
        if set(inputs) != expected:
            raise TypeError(f"{self.step.name} takes {sorted(expected)}, got {sorted(inputs)}")
        outputs = self.fn(**inputs)
        if not set(self.step.outputs) <= set(outputs) <= {*self.step.outputs, *self.step.extras}:
            raise TypeError(f"{self.step.name} must return {sorted(self.step.outputs)}"
                            + (f" (and may return {sorted(self.step.extras)})" if self.step.extras else ""))
        return Prediction(**outputs)


class FunctionBackend:
    """A backend whose predictors are plain functions: query assessment and reformulation are the
    deterministic ones above; ``synthesize(question, passages) -> {"answer": …}`` (and, if it
    knows, ``"composed": …``: SYNTHESIZE_ANSWER's extra) is the subclass's. Token usage is counted
    in ``prompt_tokens`` / ``completion_tokens``. No DSPy."""

    name = "functions"
    prompt_tokens = 0
    completion_tokens = 0

    def synthesize(self, question: str, passages: list[str]) -> dict:
        raise TypeError(f"{type(self).__name__} must define synthesize(question, passages)")

    def predictor(self, signature):
        step = step_named(signature)
        table = {ASSESS_QUERY: assess_query, REFORMULATE_QUERY: reformulate_query, SYNTHESIZE_ANSWER: self.synthesize}
        if step not in table:
            raise TypeError(f"the {self.name} backend does not answer {step.name}")
        return SignaturePredictor(step, table[step])

    @contextlib.contextmanager
    def context(self) -> Iterator[None]:
        yield

    def usage_mark(self) -> tuple[int, int]:
        return self.prompt_tokens, self.completion_tokens

    def usage_since(self, mark: tuple[int, int]) -> dict[str, int]:
        return {"prompt_tokens": self.prompt_tokens - mark[0], "completion_tokens": self.completion_tokens - mark[1]}


class ExtractiveBackend(FunctionBackend):
    """Offline and deterministic; not a language model (``is_language_model`` is False)."""

    name = "extractive"
    is_language_model = False

    def __init__(self, max_sentences: int = 3, rank_weight: float = 0.0, report_weight: float = 1.0,
                 sentence_ranker: str | None = None, dedup_restated: bool = False, dedup_threshold: float = 0.9,
                 skills_off: list[str] | tuple[str, ...] = ()):
        from fedlab.skills.registry import check_names

        self.skills_off = check_names(skills_off or ())
        self.max_sentences = int(max_sentences)
        self.rank_weight = float(rank_weight)
        self.report_weight = float(report_weight)
        self.abbreviations: Abbreviations = ()
        # lm.sentence_ranker: a JSON model under conf/ranker/ (fedlab.skills.sentence_ranker), read at the first
        # answer; None keeps the hand-set weights
        self.sentence_ranker = str(sentence_ranker) if sentence_ranker else None
        self.dedup_restated = bool(dedup_restated)
        self.dedup_threshold = float(dedup_threshold)
        if self.sentence_ranker:  # a missing or malformed file is said before any question is answered
            from fedlab.skills.sentence_ranker import load_ranker

            load_ranker(self.sentence_ranker)

    def _ranker(self):
        if not self.sentence_ranker:
            return None
        from fedlab.skills.sentence_ranker import load_ranker

        return load_ranker(self.sentence_ranker)

    def _restated(self):
        if not self.dedup_restated:
            return None
        from fedlab.skills.restated import restates

        threshold = self.dedup_threshold
        return lambda a, b: restates(a, b, threshold)

    def use_glossary(self, glossary: dict[str, str]) -> None:
        """Match the corpus's abbreviations (fedlab.corpus.glossary) both ways from now on: a
        language model knows them, this reader matches words."""
        self.abbreviations = abbreviation_terms(glossary)

    def synthesize(self, question: str, passages: list[str]) -> dict:
        return synthesize_answer(question, passages, self.max_sentences, self.abbreviations, self.rank_weight,
                                 self.report_weight, ranker=self._ranker(), restated=self._restated(),
                                 skills_off=self.skills_off)

    def describe(self) -> str:
        return "extractive (sentences selected from the sources; no language model)"
