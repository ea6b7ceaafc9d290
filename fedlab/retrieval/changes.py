"""What each policy statement changed: the sentences it added to the previous policy statement
and the ones it dropped, found by aligning the two statements' sentences on their words.

The Committee rewrites its statement a few words at a time, so the changed sentences hold what a
question about a change asks for ("how did the guidance change between the May and June
statements?"), however few of the question's words they share. A sentence is unchanged when the
other statement has one with nearly the same words (word-set Jaccard ≥ SAME_SENTENCE, numbers
included: "to 1/4 to 1/2 percent" against "at 0 to 1/4 percent" is a change). Consecutive statements are those of the timeline's policy
decisions read from a statement (fedlab.corpus.timeline), so a facility announcement or a
revised strategy statement is never compared with a policy statement.

An agent hands the changed sentences to its answer step as passages whose section names the
change (``new_since`` / ``dropped_by``); ``changed_section`` reads such a section back.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from fedlab.chunking.splitting import sentence_spans
from fedlab.corpus.document import Document

SAME_SENTENCE = 0.85  # word overlap (Jaccard) at which two sentences are the same sentence
_WORDS = re.compile(r"[a-z]+|\d+(?:[./-]\d+)*")
_NEW = "new since the statement of "
_DROPPED = "dropped by the statement of "
_CHANGED = re.compile(rf"^(?:{_NEW}|{_DROPPED})(\d{{4}}-\d{{2}}-\d{{2}})$")


@dataclass(frozen=True)
class ChangedSentence:
    doc_id: str
    start: int
    end: int
    overlap: float  # the best word overlap (Jaccard) with a sentence of the other statement (0: nothing like it)


@dataclass(frozen=True)
class StatementChange:
    """From the statement of meeting ``earlier`` to that of ``later``."""

    earlier: str  # meeting dates (ISO)
    later: str
    added: list[ChangedSentence]  # sentences of the later statement, in its order
    dropped: list[ChangedSentence]  # sentences of the earlier statement, in its order


def new_since(earlier: str) -> str:
    """The section of a passage holding a sentence the statement added since ``earlier``'s."""
    return _NEW + earlier


def dropped_by(later: str) -> str:
    """The section of a passage holding a sentence ``later``'s statement no longer has."""
    return _DROPPED + later


def changed_section(section: str | None) -> tuple[str, str] | None:
    """("new" | "dropped", the other meeting's date) for a section written by ``new_since`` or
    ``dropped_by``; None for any other."""
    section = (section or "").strip()
    found = _CHANGED.match(section)
    return None if found is None else ("new" if section.startswith(_NEW) else "dropped", found.group(1))


def _sentences(doc: Document) -> list[tuple[int, int, frozenset[str]]]:
    out = []
    for start, end in sentence_spans(doc.text):
        words = frozenset(_WORDS.findall(doc.text[start:end].lower()))
        if words:
            out.append((start, end, words))
    return out


def _unmatched(doc: Document, own: list, other: list) -> list[ChangedSentence]:
    changed = []
    for start, end, words in own:
        overlap = max((len(words & w) / len(words | w) for _, _, w in other), default=0.0)
        if overlap < SAME_SENTENCE:
            changed.append(ChangedSentence(doc.doc_id, start, end, round(overlap, 6)))
    return changed


def statement_change(earlier: Document, later: Document) -> StatementChange:
    """The sentences ``later`` added to ``earlier`` and the ones it dropped."""
    a, b = _sentences(earlier), _sentences(later)
    return StatementChange(earlier.meeting_date, later.meeting_date, _unmatched(later, b, a), _unmatched(earlier, a, b))


def policy_statements(timeline, documents: dict[str, Document]) -> list[Document]:
    """The statements of the timeline's policy decisions, in date order."""
    out = []
    for meeting in timeline:
        d = meeting.decision
        doc = documents.get(d.sentence.doc_id) if d is not None and d.source == "statement" else None
        if doc is not None and doc.doc_type == "statement":
            out.append(doc)
    return out


def changes_between(statements: list[Document], date_from: str | None, date_to: str) -> list[StatementChange]:
    """The change from each policy statement to the next, both dated within [date_from, date_to]."""
    inside = [d for d in statements if (date_from or "") <= d.meeting_date <= date_to]
    return [statement_change(a, b) for a, b in zip(inside, inside[1:])]
