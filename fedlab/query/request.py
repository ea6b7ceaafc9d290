"""The words of a question that address the system rather than ask about the documents.

"Walk me through the target range over 2019", "Can you tell me how …", "I'd like to know
whether …": the opening request ("walk me through", "can you tell me", "I'd like to know
whether") says how to answer, not what about. Its words are no evidence of the topic — "walk"
and "tell" are in no passage, and counted as unknown terms they made a question about the target
range read as one the documents cannot answer. The forms are English's ways of putting a request
(an imperative addressed to "me"/"us", a modal "can you …", a stated wish to know, an opening
verb asking for an account), none drawn from a question set.
"""
from __future__ import annotations

import re

_LEAD = r"^\s*(?:(?:please|so|ok|okay|hi|hey|now|also)\b[,!]?\s+)*"
# a verb asking for an account of something, opening the question ("describe the path of …")
ACCOUNT_VERBS = r"(?:describe|summari[sz]e|outline|trace|recount|explain|recap)"
_PARTICLE = r"(?:\s+(?:in|up|out|down))?(?:\s+(?:through|about|on|over|with|regarding|whether|if))?"
_FRAME = re.compile(
    _LEAD + r"(?:"
    # "can you (please) (briefly) tell me about", "could you walk us through"
    r"(?:can|could|would|will)\s+you\s+(?:please\s+)?(?:\w+ly\s+)?[a-z]+(?:\s+(?:me|us))?" + _PARTICLE
    # "walk me through", "tell me about", "fill me in on", "help me understand"
    + r"|(?:please\s+)?[a-z]+\s+(?:me|us)\b(?:\s+(?:understand|see|know))?" + _PARTICLE
    # "I'd like to know whether", "I want to understand", "I'm curious about", "I wonder if", "do you know"
    + r"|i(?:'d|\s+would)?\s+(?:like|want|wish|need)\s+to\s+(?:know|understand|learn|see|hear)" + _PARTICLE
    + r"|i(?:'m|\s+am)\s+(?:curious|wondering|interested)" + _PARTICLE
    + r"|i\s+wonder(?:\s+(?:whether|if))?|do\s+you\s+know" + _PARTICLE
    # "Describe …", "Trace …", "Summarize …": an account asked for
    + rf"|(?:please\s+)?{ACCOUNT_VERBS}(?=\s)(?!\s+of\b)" + _PARTICLE
    + r")(?=\s|$)[,:]?\s*", re.I)
_WHETHER = re.compile(r"\b(?:whether|if)\W*$", re.I)  # "I'd like to know whether": a yes/no question
_QUESTION_WORD = re.compile(r"\s*(?:what|which|when|who|whom|whose|why|where|how|whether|if|did|does|do|is|are|was"
                            r"|were|has|have|had|can|could|will|would|should)\b", re.I)


def split_request(question: str) -> tuple[str, str]:
    """(the opening request, the rest): ("Walk me through ", "the target range over 2019."); ("",
    question) when it opens with none."""
    m = _FRAME.match(question)
    if m is None or not question[m.end():].strip():
        return "", question
    return question[:m.end()], question[m.end():]


def asks_for_account(question: str) -> bool:
    """Whether the question is a request for an account of its subject with no question word of
    its own ("Walk me through the target range over 2019", "Describe the taper") — what a path
    question asks — rather than a request wrapping one ("Can you tell me when …")."""
    frame, rest = split_request(question)
    return bool(frame) and not _WHETHER.search(frame) and not _QUESTION_WORD.match(rest)

