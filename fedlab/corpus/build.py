"""Build the corpus snapshot: discover → fetch → clean → docs.jsonl + manifest.json."""
from __future__ import annotations

import hashlib
import json
import logging
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from fedlab import io
from fedlab.corpus import calendar
from fedlab.corpus.clean import clean_minutes, clean_statement, decode
from fedlab.corpus.document import Document, doc_id_for
from fedlab.corpus.snapshot import content_hash
from fedlab.corpus.fetch import FetchResult, PageFetcher

log = logging.getLogger(__name__)
LAST_UPDATE_RE = re.compile(r"([A-Z][a-z]+ \d{1,2}, \d{4})")


@dataclass
class BuildReport:
    documents: list[Document]
    missing: list[dict] = field(default_factory=list)  # {url, reason}
    fetched: int = 0
    cached: int = 0
    requests: int = 0
    content_hash: str = ""

    @property
    def counts(self) -> dict[str, int]:
        out = {"statement": 0, "minutes": 0}
        for d in self.documents:
            out[d.doc_type] += 1
        out["total"] = len(self.documents)
        return out


def saved_refs(site_root: Path, years: range) -> list[calendar.PageRef]:
    """Every statement and minutes page present in a saved copy of the site."""
    refs = []
    for pattern in ("newsevents/pressreleases/monetary*a.htm", "monetarypolicy/fomcminutes*.htm"):
        for f in sorted(site_root.glob(pattern)):
            path = "/" + f.relative_to(site_root).as_posix()
            kind = calendar.classify(path)
            if kind and int(kind[1][:4]) in years:
                refs.append(calendar.PageRef(kind[0], kind[1], path))
    return refs


def discover(fetcher: PageFetcher, years: range, on_fetch=None) -> tuple[list[calendar.PageRef], list[FetchResult]]:
    """Page refs for the configured years: the main calendar, then historical pages for
    years it does not list. Returns the refs and the calendar fetches that failed."""
    failures: list[FetchResult] = []
    refs: list[calendar.PageRef] = []
    listed: set[int] = set()
    main = fetcher.fetch(calendar.CALENDAR_PATH, volatile=True)
    if on_fetch:
        on_fetch(main)
    if main.body is not None:
        refs, listed = calendar.parse_calendar(main.body)
    else:
        failures.append(main)
    for year in years:
        if year in listed:
            continue
        page = fetcher.fetch(calendar.historical_path(year), volatile=True)
        if on_fetch:
            on_fetch(page)
        if page.body is None:
            failures.append(page)
            continue
        refs.extend(calendar.parse_links(page.body))
    return [r for r in refs if int(r.meeting_date[:4]) in years], failures


def merge_refs(primary: list[calendar.PageRef], extra: list[calendar.PageRef]) -> list[calendar.PageRef]:
    """One ref per page; calendar metadata wins over a bare ref from a listing."""
    merged: dict[str, calendar.PageRef] = {}
    for ref in [*primary, *extra]:
        merged.setdefault(ref.path, ref)
    return sorted(merged.values(), key=lambda r: (r.meeting_date, r.doc_type))


def _month_day_year(text: str | None) -> str | None:
    if not text:
        return None
    m = LAST_UPDATE_RE.search(text)
    return calendar.parse_date(m.group(1)) if m else None


def to_document(ref: calendar.PageRef, url: str, body: bytes) -> Document:
    html = decode(body)
    page = clean_statement(html) if ref.doc_type == "statement" else clean_minutes(html)
    release = ref.release_date
    if release is None:
        release = ref.meeting_date if ref.doc_type == "statement" else _month_day_year(page.last_update)
    label = ref.meeting or _meeting_label(page.text, ref)
    pretty = calendar.pretty_date(ref.meeting_date)
    kind = "FOMC statement" if ref.doc_type == "statement" else "FOMC minutes"
    return Document(
        doc_id=doc_id_for(ref.doc_type, ref.meeting_date),
        doc_type=ref.doc_type,
        meeting_date=ref.meeting_date,
        release_date=release,
        title=f"{kind}, {pretty}",
        url=url,
        text=page.text,
        sections=page.sections,
        meeting=label,
    )


def _meeting_label(text: str, ref: calendar.PageRef) -> str | None:
    """Minutes open with the meeting's dates ("January 30–31, 2024")."""
    if ref.doc_type != "minutes":
        return None
    first = text.split("\n", 1)[0]
    return first if calendar.MEETING_LINE_RE.match(first) else None


def share_meeting_labels(docs: list[Document]) -> list[Document]:
    """Statements not on the calendar borrow the meeting label of their minutes; sorted."""
    labels = {d.meeting_date: d.meeting for d in docs if d.meeting}
    out = [d if d.meeting else replace(d, meeting=labels.get(d.meeting_date)) for d in docs]
    return sorted(out, key=lambda d: (d.meeting_date, d.doc_type))


def write_snapshot(out_dir: Path, report: BuildReport, meta: dict) -> None:
    """docs.jsonl then manifest.json, each atomically.

    docs.jsonl is rewritten unless the file on disk already holds exactly these documents —
    decided from the file's own bytes, never from the previous manifest, so a run that died
    between the two writes (new docs, old manifest: refused by :func:`fedlab.corpus.snapshot.load_corpus`) is
    repaired by the next one.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    docs_path = out_dir / "docs.jsonl"
    manifest_path = out_dir / "manifest.json"
    data = io.jsonl_bytes(d.to_json() for d in report.documents)
    try:
        on_disk = hashlib.sha256(docs_path.read_bytes()).hexdigest()
    except OSError:
        on_disk = None
    if on_disk != hashlib.sha256(data).hexdigest():
        io.write_bytes(docs_path, data)
    io.write_json(
        manifest_path,
        {
            **meta,
            "content_hash": report.content_hash,
            "counts": report.counts,
            "missing": report.missing,
            "last_run": {"fetched": report.fetched, "cached": report.cached, "requests": report.requests},
        },
    )
