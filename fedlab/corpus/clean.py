"""HTML → clean text for FOMC statements and minutes.

The article body only; paragraphs separated by blank lines; minutes' section headers on
lines of their own, recorded with their character offsets.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from bs4 import BeautifulSoup, NavigableString, Tag

from fedlab.corpus.document import Section

BLOCK_TAGS = {"p", "li", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "dt", "dd", "pre", "caption"}
# Lines that are page furniture, not content.
BOILERPLATE = [
    re.compile(r"^for media inquiries", re.I),
    re.compile(r"^implementation note issued", re.I),
    re.compile(r"^last update", re.I),
    re.compile(r"^(return to text|back to top)$", re.I),
    re.compile(r"^_{3,}$"),
    re.compile(r"^share$", re.I),
    re.compile(r"^\(?(pdf|html)\)?$", re.I),
]
DATE_LINE = re.compile(
    r"^(January|February|March|April|May|June|July|August|September|October|November|December)"
    r"\s+\d{1,2}(\s*[–-]\s*([A-Z][a-z]+\s+)?\d{1,2})?,?\s+\d{4}$"
)
FOOTNOTE_ANCHOR = re.compile(r"^fn\d+$")
RETURN_TO_TEXT = re.compile(r"\s*Return to text\s*$", re.I)
_INVISIBLE = dict.fromkeys(map(ord, "\u00ad\u200b\u200c\u200d\u2060\ufeff"), None)
_HYPHENS = dict.fromkeys(map(ord, "\u2010\u2011"), "-")  # (non-breaking) hyphen → ASCII, as typed
_SPACES = re.compile(r"[ \t\r\f\v\u00a0\u2000-\u200a\u202f\u205f\u3000]+")


@dataclass(frozen=True)
class CleanPage:
    text: str
    sections: list[Section]
    page_title: str | None
    last_update: str | None


class CleaningError(ValueError):
    """The page has no article body: not an FOMC statement/minutes page, or truncated."""


def normalize(text: str) -> str:
    """NFC, invisible characters dropped, every run of spaces (incl. NBSP) folded to one."""
    text = unicodedata.normalize("NFC", text).translate(_INVISIBLE).translate(_HYPHENS)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = (_SPACES.sub(" ", line).strip() for line in text.split("\n"))
    return "\n".join(line for line in lines if line)


def decode(raw: bytes) -> str:
    """Pages are UTF-8 with a byte-order mark; fall back to cp1252 for legacy pages."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return raw.decode("cp1252", errors="replace")


def _drop_footnote_markers(root: Tag) -> None:
    for a in root.find_all("a", href=True):
        if a["href"].startswith("#fn") or a.find("sup") is not None and a["href"].startswith("#"):
            a.decompose()
    for sup in root.find_all("sup"):
        if sup.get_text(strip=True).isdigit():
            sup.decompose()
    for tag in root.find_all(["script", "style", "noscript", "form", "button"]):
        tag.decompose()


def _block_text(el: Tag) -> str:
    parts: list[str] = []
    for node in el.descendants:
        if isinstance(node, NavigableString):
            parts.append(re.sub(r"[\r\n]+", " ", str(node)))  # a source line break is a space in HTML
        elif node.name == "br":
            parts.append("\n")
    return "".join(parts)


def _leading_header(p: Tag) -> str | None:
    """A paragraph that opens with <strong>Header</strong> followed by <br> or nothing."""
    children = [c for c in p.children if not (isinstance(c, NavigableString) and not c.strip())]
    if not children or not isinstance(children[0], Tag) or children[0].name not in ("strong", "b"):
        return None
    header = normalize(children[0].get_text(" "))
    rest = children[1:]
    if rest and not (isinstance(rest[0], Tag) and rest[0].name == "br"):
        return None
    if not header or len(header.split()) > 16 or header[-1] in ".:;," or DATE_LINE.match(header):
        return None
    if header.lower().startswith(("voting", "videoconference meeting of")) and not rest:
        return None
    return header


def _leaf_blocks(root: Tag) -> list[Tag]:
    """Block elements with no block element inside them, in document order."""
    return [
        el for el in root.find_all(BLOCK_TAGS)
        if el.find(BLOCK_TAGS) is None
    ]


def _assemble(blocks: list[tuple[str, bool]]) -> tuple[str, list[Section]]:
    """Join (text, is_header) blocks with blank lines; record header offsets."""
    out: list[str] = []
    sections: list[Section] = []
    pos = 0
    for text, is_header in blocks:
        if out:
            out.append("\n\n")
            pos += 2
        if is_header:
            if sections:
                sections[-1] = Section(sections[-1].title, sections[-1].start, pos - 2)
            sections.append(Section(text, pos, -1))
        out.append(text)
        pos += len(text)
    if sections:
        sections[-1] = Section(sections[-1].title, sections[-1].start, pos)
    return "".join(out), sections


def _is_boilerplate(line: str) -> bool:
    return any(p.search(line) for p in BOILERPLATE)


def _is_centered(el: Tag) -> bool:
    return "center" in (el.get("style") or "") or "center" in (el.get("align") or "")


def _is_link_only(el: Tag) -> bool:
    links = el.find_all("a", href=True)
    if len(links) != 1:
        return False
    return normalize(links[0].get_text(" ")) == normalize(el.get_text(" ")) != ""


def _collect(container: Tag, with_headers: bool) -> list[tuple[str, bool]]:
    blocks: list[tuple[str, bool]] = []
    in_notes = False
    for el in _leaf_blocks(container):
        if el.name in ("h1", "h2", "h3") and el.get_text(strip=True).startswith("Minutes of the"):
            continue
        if with_headers and not in_notes and el.find("a", attrs={"name": FOOTNOTE_ANCHOR}):
            blocks.append(("Notes", True))  # the footnotes below the rule
            in_notes = True
        if _is_link_only(el):
            continue  # related-links lists ("FAQs: …", "Implementation Note issued …")
        header = None
        if with_headers and el.name == "p" and not _is_centered(el):
            header = _leading_header(el)
        if header is None and with_headers and el.name in ("h4", "h5", "h6"):
            header = normalize(el.get_text(" ")) or None
        text = normalize(_block_text(el))
        text = RETURN_TO_TEXT.sub("", text)
        if header:
            blocks.append((header, True))
            text = normalize(text[text.find(header) + len(header):]) if header in text else text
        lines = [ln for ln in text.split("\n") if ln and not _is_boilerplate(ln)]
        if lines:
            blocks.append(("\n".join(lines), False))
    return blocks


def _soup(html: str) -> BeautifulSoup:
    return BeautifulSoup(html, "lxml")


def _last_update(soup: BeautifulSoup) -> str | None:
    node = soup.find(id="lastUpdate")
    if node is None:
        return None
    return normalize(node.get_text(" ")).removeprefix("Last Update:").strip() or None


def clean_statement(html: str) -> CleanPage:
    soup = _soup(html)
    article = soup.find(id="article")
    if article is None:
        raise CleaningError("no div#article in statement page")
    title = article.find(class_="title")
    bodies = [
        d for d in article.find_all("div", class_="col-sm-8")
        if "heading" not in (d.get("class") or []) and d.find_parent("div", class_="col-sm-8") is None
    ]
    if not bodies:
        raise CleaningError("no statement body in div#article")
    _drop_footnote_markers(article)
    blocks: list[tuple[str, bool]] = []
    for body in bodies:
        blocks.extend(_collect(body, with_headers=False))
    text, sections = _assemble(blocks)
    if not text:
        raise CleaningError("statement body is empty")
    return CleanPage(text, sections, normalize(title.get_text(" ")) if title else None, _last_update(soup))


def clean_minutes(html: str) -> CleanPage:
    soup = _soup(html)
    article = soup.find(id="article")
    if article is None:
        raise CleaningError("no div#article in minutes page")
    _drop_footnote_markers(article)
    blocks = _collect(article, with_headers=True)
    text, sections = _assemble(blocks)
    if len(text) < 1000:
        raise CleaningError("minutes body is too short: the page is truncated or not a minutes page")
    return CleanPage(text, sections, "Minutes of the Federal Open Market Committee", _last_update(soup))
