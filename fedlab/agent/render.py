"""The answer panel `ask` prints (rich), as in FedQuery: answer, confidence, sources."""
from __future__ import annotations

from fedlab.agent.types import ABSTAIN_REASONS, AgentAnswer

LEVEL_STYLE = {"high": "green", "medium": "yellow", "low": "red", "insufficient": "red"}


def _source_line(n: int | None, title: str, meeting_date: str, section: str | None, chunk_id: str) -> str:
    where = f", §{section}" if section else ""
    tag = f"[{n}] " if n is not None else "- "
    return f"{tag}{title} ({meeting_date}){where} (chunk {chunk_id})"


def print_answer(answer: AgentAnswer, backend: str, total_ms: float, console=None) -> None:
    from rich.console import Console, Group
    from rich.panel import Panel
    from rich.text import Text

    console = console or Console()
    style = LEVEL_STYLE.get(answer.confidence_level, "white")
    body = [Text(answer.answer)]
    if answer.coverage_note:
        body.append(Text(f"\n{answer.coverage_note}", style="italic"))
    if answer.abstained and answer.abstain_reason:
        reason = ABSTAIN_REASONS.get(answer.abstain_reason, answer.abstain_reason)
        if answer.unknown_words:
            reason += f" (the documents never use {', '.join(repr(w) for w in answer.unknown_words)}: ask in other words)"
        body.append(Text(f"\nwhy no answer: {reason}", style="bold"))
    if answer.citations:
        body.append(Text("\nSources:", style="bold"))
        for c in answer.citations:
            body.append(Text("  " + _source_line(c.n, c.title, c.meeting_date, c.section, c.chunk_id)))
    footer = f"{backend} · {answer.attempts} search(es) · {total_ms:.0f} ms"
    body.append(Text(f"\n{footer}", style="dim"))
    title = Text.assemble("fedlab  Confidence: ", (f"{answer.confidence_level}", f"bold {style}"),
                          f" ({answer.confidence:.2f})")
    console.print(Panel(Group(*body), title=title, title_align="left"))


def print_sources_only(hits, document, console=None) -> None:
    """The retrieved passages, when no answer could be written (the backend failed)."""
    from rich.console import Console

    console = console or Console()
    console.print(f"Retrieved sources ({len(hits)}), without an answer:")
    for h in hits:
        doc = document(h.chunk.doc_id)
        title = doc.title if doc else h.chunk.doc_id
        console.print("  " + _source_line(None, title, h.chunk.meeting_date, h.chunk.section, h.chunk.chunk_id),
                      markup=False, highlight=False)
