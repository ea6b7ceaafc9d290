"""Contextual chunking: a line naming the document and section is embedded with each chunk."""
from __future__ import annotations

from dataclasses import dataclass

from fedlab.chunking.base import DocContext
from fedlab.chunking.chunk import Chunk
from fedlab.chunking.recursive import SectionChunker
from fedlab.corpus.document import Document
from fedlab.errors import FedlabError

TEMPLATE_FIELDS = ("title", "doc_type", "meeting_date", "section")
# Left at the end of the line when a chunk has no section and the template ends with "{section}".
_DANGLING = " \t|,;:-–—"


@dataclass(frozen=True)
class ContextualChunker(SectionChunker):
    """Section-bounded chunks whose embed_text is ``template`` (one line) + newline + text;
    text stays the exact document slice. ``size`` budgets the text; the line's tokens come
    on top and are counted in the stats. Template fields: {title} {doc_type} {meeting_date}
    {section}; a chunk outside any section gets ``no_section`` (empty: the trailing
    separator is dropped)."""

    name = "contextual"
    template: str = "{title} | {meeting_date} | {section}"
    no_section: str = ""

    def __post_init__(self):
        super().__post_init__()
        if "\n" in self.template or "\n" in self.no_section:
            raise FedlabError("chunker.template must be a single line: remove the newline from chunker.template")
        try:
            self.template.format(**{k: "x" for k in TEMPLATE_FIELDS})
        except (KeyError, IndexError, ValueError) as e:
            raise FedlabError(
                f"chunker.template {self.template!r} is not valid ({type(e).__name__}: {e}): "
                f"use only the fields {', '.join('{' + f + '}' for f in TEMPLATE_FIELDS)}"
            ) from None

    def context_line(self, doc: Document, section: str | None, meeting_date: str | None = None) -> str:
        """``meeting_date``: the passage's meeting when its section records another than the document's."""
        line = self.template.format(
            title=doc.title, doc_type=doc.doc_type, meeting_date=meeting_date or doc.meeting_date,
            section=section if section is not None else self.no_section,
        )
        return line.rstrip(_DANGLING) if section is None and not self.no_section else line

    def chunk_document(self, ctx: DocContext) -> list[tuple[Chunk, int]]:
        line_tokens: dict[str, int] = {}
        out = []
        for plain, n_text in super().chunk_document(ctx):
            line = self.context_line(ctx.doc, plain.section, plain.meeting_date)
            if line not in line_tokens:
                line_tokens[line] = len(ctx.tokenizer.token_spans(line))
            chunk = self.make_chunk(ctx, plain.start, plain.end, plain.section, embed_text=f"{line}\n{plain.text}")
            out.append((chunk, line_tokens[line] + n_text))
        return out
