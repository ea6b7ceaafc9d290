"""The extractive backend: deterministic answers built from the retrieved sentences, no language model.

It answers the agent's DSPy signatures with plain functions wrapped as predictors that take the
signature's input fields and return a ``dspy.Prediction`` with its output fields — the same
contract ``dspy.Predict(signature)`` honours, so the program's modules run unchanged. A custom
DSPy LM engine would instead have to read the fields back out of the chat adapter's prompt
text and write its reply in that format: a second parser of DSPy's private prompt layout, for
no gain, since nothing here is a language model. CI and offline sweeps use this backend.

- assess_query: dates from the deterministic parser (fedlab.retrieval.dates); intent from a
  small keyword model — fomc when a content word is in the FOMC/monetary/economy vocabulary
  below (generic verbs such as "cut" or "lower" are left out of it: "lower back pain");
  otherwise unclear when the question names dates or has no content words (the search and its
  confidence decide), else off_topic.
- reformulate_query: attempt 1 drops the date words and function words (the date range is
  applied as a filter anyway); attempt 2 adds the Committee's own terms for what was asked
  (VOCABULARY_EXPANSIONS).
- synthesize_answer: splits the passages into sentences, ranks them by IDF-weighted overlap with
  the question's terms, date words aside, plus the expansions above (numbers count double), and returns the best 1-3, each followed by its
  [Source N]; nothing when no sentence shares a content term with the question.
"""
from __future__ import annotations

import contextlib
import math
import re
from datetime import date
from typing import Callable, Iterator

from fedlab.index.tokens import Tokenizer, stem
from fedlab.chunking.splitting import sentence_spans

TOKENS = Tokenizer()
QUESTION_WORDS = frozenset(stem(w) for w in """
did does do say said tell told describe described explain happen happened mention mentioned
fed fomc federal reserve committee meeting meetings minutes statement statements
""".split())
FOMC_VOCABULARY = frozenset(stem(w) for w in """
fed fomc federal reserve committee monetary policy policies rate rates interest inflation inflationary
pce cpi deflation disinflation employment unemployment jobs labor labour payroll payrolls wages
economy economic growth gdp recession spending consumer consumption investment
housing mortgage mortgages financial markets treasury treasuries securities bonds yields
yield balance sheet assets asset purchases taper tapering runoff reinvestment
liquidity credit banks banking lending loans dollar currency tightening easing
hike hikes hiked dissent dissented dissenter projections outlook forecast risks
uncertainty stance accommodation accommodative restrictive repo
pandemic covid commodity oil energy tariffs productivity powell statement minutes meeting
participants directive framework ioer iorb mbs vote voted dissenting purchase
""".split())
VOCABULARY_EXPANSIONS = {
    stem("rates"): "target range for the federal funds rate",
    stem("rate"): "target range for the federal funds rate",
    stem("hike"): "raise the target range",
    stem("cut"): "lower the target range",
    stem("inflation"): "inflation remains elevated 2 percent objective",
    stem("prices"): "inflation prices",
    stem("jobs"): "employment labor market unemployment rate",
    stem("labor"): "labor market conditions employment",
    stem("balance"): "securities holdings balance sheet",
    stem("taper"): "reduce the pace of net asset purchases",
    stem("qe"): "asset purchases Treasury securities agency mortgage-backed securities",
    stem("dissent"): "voting against the action",
    stem("dissenter"): "voting against the action",
    stem("dissented"): "voting against the action",
    stem("economy"): "economic activity growth",
    stem("growth"): "economic activity real GDP",
}
_NUMBER = re.compile(r"^\d")
PASSAGE_HEAD = re.compile(r"^\[Source (\d+)\][^\n]*\n", re.S)
MAX_SENTENCE_CHARS = 700


def content_terms(text: str) -> list[str]:
    return [t for t in TOKENS(text) if t not in QUESTION_WORDS]


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

    hint = parse_date_hint(question)
    text = question.replace(hint.text, " ") if hint and hint.text else question
    words = [w for w in re.findall(r"[A-Za-z][A-Za-z'-]*|\d+(?:[.,/-]\d+)*", text)
             if stem(w.lower()) not in QUESTION_WORDS and TOKENS(w)]
    query = " ".join(words)
    if attempt >= 2:
        extra = [VOCABULARY_EXPANSIONS[t] for t in dict.fromkeys(TOKENS(query)) if t in VOCABULARY_EXPANSIONS]
        query = " ".join([query, *extra])
    query = query.strip() or previous_query
    return {"query": query}


def _sentences(passage: str) -> tuple[int | None, list[str]]:
    head = PASSAGE_HEAD.match(passage)
    body = passage[head.end():] if head else passage
    n = int(head.group(1)) if head else None
    parts = [" ".join(block[a:b].split()) for block in re.split(r"\n\s*\n", body) for a, b in sentence_spans(block)]
    # a chunk may start mid-sentence: a lower-case opening is a fragment, not a sentence
    return n, [s for s in parts if 20 <= len(s) <= MAX_SENTENCE_CHARS and not s[0].islower()]


def undated_terms(question: str) -> set[str]:
    """The question's content terms without its date words (the date range is filtered on)."""
    from fedlab.retrieval.dates import parse_date_hint

    hint = parse_date_hint(question)
    return set(content_terms(question)) - (set(TOKENS(hint.text)) if hint else set())


def synthesize_answer(question: str, passages: list[str], max_sentences: int = 3) -> dict:
    q_terms = undated_terms(question)
    candidates = []  # (source n, position, sentence, terms)
    for i, passage in enumerate(passages):
        n, sentences = _sentences(passage)
        for j, sentence in enumerate(sentences):
            candidates.append((n if n is not None else i + 1, (i, j), sentence, set(TOKENS(sentence))))
    if not q_terms or not candidates:
        return {"answer": ""}
    q_terms |= {t for term in list(q_terms) if term in VOCABULARY_EXPANSIONS
                for t in TOKENS(VOCABULARY_EXPANSIONS[term])}
    df = {t: sum(t in c[3] for c in candidates) for t in q_terms}
    idf = {t: math.log(1 + len(candidates) / df[t]) for t in q_terms if df[t]}

    def score(terms: set[str]) -> float:
        return sum(idf[t] * (2.0 if _NUMBER.match(t) else 1.0) for t in q_terms & terms if t in idf)

    ranked = sorted(((score(c[3]), c) for c in candidates), key=lambda sc: (-sc[0], sc[1][1]))
    best = ranked[0][0] if ranked else 0.0
    if best <= 0:
        return {"answer": ""}
    chosen, seen = [], set()
    for s, (n, _, sentence, _) in ranked:
        if s < 0.5 * best or len(chosen) == max_sentences:
            break
        if sentence.lower() in seen:
            continue
        seen.add(sentence.lower())
        chosen.append(f"{sentence} [Source {n}]")
    return {"answer": " ".join(chosen)}


class SignaturePredictor:
    """A predictor for one signature: the signature's inputs in, a Prediction with its outputs out."""

    def __init__(self, signature, fn: Callable[..., dict]):
        self.signature = signature
        self.fn = fn

    def __call__(self, **inputs):
        import dspy

        expected = set(self.signature.input_fields)
        if set(inputs) != expected:
            raise TypeError(f"{self.signature.__name__} takes {sorted(expected)}, got {sorted(inputs)}")
        outputs = self.fn(**inputs)
        if set(outputs) != set(self.signature.output_fields):
            raise TypeError(f"{self.signature.__name__} must return {sorted(self.signature.output_fields)}")
        return dspy.Prediction(**outputs)


class FunctionBackend:
    """A backend whose predictors are plain functions: query assessment and reformulation are the
    deterministic ones above; ``synthesize(question, passages) -> {"answer": …}`` is the
    subclass's. Token usage is counted in ``prompt_tokens`` / ``completion_tokens``."""

    name = "functions"
    prompt_tokens = 0
    completion_tokens = 0

    def synthesize(self, question: str, passages: list[str]) -> dict:
        raise TypeError(f"{type(self).__name__} must define synthesize(question, passages)")

    def predictor(self, signature):
        from fedlab.agent import signatures as sig

        table = {sig.AssessQuery: assess_query, sig.ReformulateQuery: reformulate_query,
                 sig.SynthesizeAnswer: self.synthesize}
        if signature not in table:
            raise TypeError(f"the {self.name} backend does not answer {signature.__name__}")
        return SignaturePredictor(signature, table[signature])

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

    def __init__(self, max_sentences: int = 3):
        self.max_sentences = int(max_sentences)

    def synthesize(self, question: str, passages: list[str]) -> dict:
        return synthesize_answer(question, passages, self.max_sentences)

    def describe(self) -> str:
        return "extractive (sentences selected from the sources; no language model)"
