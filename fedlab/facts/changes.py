"""What each policy statement changed: the sentences it added to the previous policy statement
and the ones it dropped, found by aligning the two statements' sentences on their words.

The Committee rewrites its statement a few words at a time, so the changed sentences hold what a
question about a change asks for ("how did the guidance change between the May and June
statements?"), however few of the question's words they share. A sentence is unchanged when the
other statement has one with nearly the same words (word-set Jaccard ≥ SAME_SENTENCE, numbers
included) and the same numbers: a long decision sentence that only moved its range ("… to 1/4 to
1/2 percent and anticipates that ongoing increases …" against "… to 3/4 to 1 percent and …") shares
more than SAME_SENTENCE of its words, and its new range is the change. The changed sentences
come in edits: the two statements' sentence sequences are aligned (difflib, the unchanged sentences
as anchors), and the sentences one statement dropped between two anchors and those the other put
there are one edit — the new wording of what was dropped ("will be patient …" became "will act as
appropriate …"), however few words the two share. Consecutive statements are those of the timeline's policy
decisions read from a statement (fedlab.facts.timeline), so a facility announcement or a
revised strategy statement is never compared with a policy statement.

An agent hands the changed sentences to its answer step as passages whose section names the
change and its edit (``new_since`` / ``dropped_by``); ``changed_section`` reads such a section back.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher

from fedlab.chunking.splitting import sentence_spans
from fedlab.corpus.document import Document

SAME_SENTENCE = 0.85  # word overlap (Jaccard) at which two sentences are the same sentence
_WORDS = re.compile(r"[a-z]+|\d+(?:[./-]\d+)*")
_NEW = "new since the statement of "
_DROPPED = "dropped by the statement of "
_EDIT = ", edit "
_CHANGED = re.compile(rf"^(?:{_NEW}|{_DROPPED})(\d{{4}}-\d{{2}}-\d{{2}})(?:{_EDIT}(\d+))?$")


@dataclass(frozen=True)
class ChangedSentence:
    doc_id: str
    start: int
    end: int
    overlap: float  # the best word overlap (Jaccard) with a sentence of the other statement (0: nothing like it)
    edit: int = 0  # the edit it belongs to (module docstring), numbered from 1 in document order; shared by both sides


@dataclass(frozen=True)
class StatementChange:
    """From the statement of meeting ``earlier`` to that of ``later``."""

    earlier: str  # meeting dates (ISO)
    later: str
    added: list[ChangedSentence]  # sentences of the later statement, in its order
    dropped: list[ChangedSentence]  # sentences of the earlier statement, in its order


def new_since(earlier: str, edit: int = 0) -> str:
    """The section of a passage holding a sentence the statement added since ``earlier``'s (in
    ``edit``, when one is given)."""
    return _NEW + earlier + (f"{_EDIT}{edit}" if edit else "")


def dropped_by(later: str, edit: int = 0) -> str:
    """The section of a passage holding a sentence ``later``'s statement no longer has."""
    return _DROPPED + later + (f"{_EDIT}{edit}" if edit else "")


def changed_section(section: str | None) -> tuple[str, str, int] | None:
    """("new" | "dropped", the other meeting's date, the edit or 0) for a section written by
    ``new_since`` or ``dropped_by``; None for any other."""
    section = (section or "").strip()
    found = _CHANGED.match(section)
    if found is None:
        return None
    return "new" if section.startswith(_NEW) else "dropped", found.group(1), int(found.group(2) or 0)


def _sentences(doc: Document) -> list[tuple[int, int, frozenset[str]]]:
    out = []
    for start, end in sentence_spans(doc.text):
        words = frozenset(_WORDS.findall(doc.text[start:end].lower()))
        if words:
            out.append((start, end, words))
    return out


def _numbers(words: frozenset[str]) -> frozenset[str]:
    return frozenset(w for w in words if w[0].isdigit())


def statement_change(earlier: Document, later: Document) -> StatementChange:
    """The sentences ``later`` added to ``earlier`` and the ones it dropped, each with its edit."""
    a, b = _sentences(earlier), _sentences(later)
    overlap = [[len(wa & wb) / len(wa | wb) for _, _, wb in b] for _, _, wa in a]  # word Jaccard, a x b
    # the same sentence: nearly the same words and the same numbers (a new range or amount is the change)
    a_numbers, b_numbers = [_numbers(w) for _, _, w in a], [_numbers(w) for _, _, w in b]
    same = [[o >= SAME_SENTENCE and na == nb for o, nb in zip(row, b_numbers)] for row, na in zip(overlap, a_numbers)]
    a_overlap = [max(row, default=0.0) for row in overlap]
    a_same = [any(row) for row in same]
    b_best = [max(range(len(a)), key=lambda i: (same[i][j], overlap[i][j]), default=None) for j in range(len(b))]
    b_overlap = [overlap[i][j] if i is not None else 0.0 for j, i in enumerate(b_best)]
    b_same = [i is not None and same[i][j] for j, i in enumerate(b_best)]
    # the alignment's tokens: a later sentence that is an earlier one takes that one's index
    b_keys = [i if kept else len(a) + j for j, (i, kept) in enumerate(zip(b_best, b_same))]
    a_edit, b_edit = [0] * len(a), [0] * len(b)
    edit = 0
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, list(range(len(a))), b_keys, autojunk=False).get_opcodes():
        changed_a = [i for i in range(i1, i2) if not a_same[i]]
        changed_b = [j for j in range(j1, j2) if not b_same[j]]
        if tag == "equal" or not (changed_a or changed_b):
            continue
        edit += 1
        for i in changed_a:
            a_edit[i] = edit
        for j in changed_b:
            b_edit[j] = edit
    added = [ChangedSentence(later.doc_id, start, end, round(o, 6), b_edit[j])
             for j, ((start, end, _), o) in enumerate(zip(b, b_overlap)) if not b_same[j]]
    dropped = [ChangedSentence(earlier.doc_id, start, end, round(o, 6), a_edit[i])
               for i, ((start, end, _), o) in enumerate(zip(a, a_overlap)) if not a_same[i]]
    return StatementChange(earlier.meeting_date, later.meeting_date, added, dropped)


def policy_statements(timeline, documents: dict[str, Document]) -> list[Document]:
    """The statements of the timeline's policy decisions, in date order."""
    out = []
    for meeting in timeline:
        d = meeting.decision
        doc = documents.get(d.sentence.doc_id) if d is not None and d.source == "statement" else None
        if doc is not None and doc.doc_type == "statement":
            out.append(doc)
    return out


def changes_between(statements: list[Document], date_from: str | None, date_to: str,
                    previous: bool = False) -> list[StatementChange]:
    """The change from each policy statement to the next, both dated within [date_from, date_to]
    (``previous``: and the change into the first of them from the statement before it — what a
    meeting changed)."""
    first = next((i for i, d in enumerate(statements) if (date_from or "") <= d.meeting_date), len(statements))
    inside = [d for d in statements[first:] if d.meeting_date <= date_to]
    if previous and inside and first > 0:
        inside = [statements[first - 1], *inside]
    return [statement_change(a, b) for a, b in zip(inside, inside[1:])]
