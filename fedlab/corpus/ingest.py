"""Run an ingest: the fetcher, discovery and cleaning wired together, with progress."""
from __future__ import annotations

import hashlib
import logging
import time
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from fedlab.corpus.build import BuildReport, share_meeting_labels, discover, merge_refs, saved_refs, to_document, write_snapshot
from fedlab.corpus.snapshot import content_hash
from fedlab.corpus.clean import CleaningError
from fedlab.corpus.fetch import FetchResult, MirrorTransport, PageCache, PageFetcher
from fedlab.errors import FedlabError

log = logging.getLogger(__name__)
# The longest cleaned document is under 100,000 characters (minutes); ten times that is no statement
# or minutes, and would be chunked and embedded as tens of thousands of passages.
DEFAULT_MAX_DOC_CHARS = 1_000_000


def run_ingest(
    name: str,
    base_url: str,
    out_dir: str | Path,
    raw_cache_dir: str | Path,
    years: range,
    mirror: str | None = None,
    fetch: dict | None = None,
    volatile_ttl_h: float = 24.0,
    console: Console | None = None,
    allow_shrink: bool = False,
    max_doc_chars: int = DEFAULT_MAX_DOC_CHARS,
) -> BuildReport:
    console = console or Console(stderr=True)
    transport = None
    source = base_url
    cache_root = Path(raw_cache_dir) / base_url.split("://")[-1].strip("/")
    if mirror:
        mirror_path = Path(mirror).expanduser()
        if not mirror_path.is_dir():
            raise FedlabError(
                f"corpus.mirror={mirror} is not a directory; point it (or FEDLAB_MIRROR) at a saved copy "
                "of the site such as ../shared/fomc-mirror, or unset it to read the live site"
            )
        transport = MirrorTransport(mirror_path)
        source = f"mirror:{mirror_path.resolve()}"
        cache_root = Path(raw_cache_dir) / mirror_cache_name(mirror_path)
    cache = PageCache(cache_root, ttl_s=volatile_ttl_h * 3600)
    started = time.perf_counter()
    report = BuildReport(documents=[])
    counts = {"fetched": 0, "cached": 0, "missing": 0}

    def tally(res: FetchResult) -> None:
        counts[res.status] += 1

    with PageFetcher(base_url, cache=cache, transport=transport, **(fetch or {})) as fetcher:
        refs, failures = discover(fetcher, years, on_fetch=tally)
        if transport is not None:
            host = base_url.split("://")[-1].split("/")[0]
            refs = merge_refs(refs, saved_refs(transport.site_root(host), years))
        else:
            refs = merge_refs(refs, [])
        report.missing.extend({"url": f.url, "reason": f.reason} for f in failures)
        by_path = {r.path: r for r in refs}
        progress = Progress(
            TextColumn("[bold]fetching[/]"), BarColumn(), MofNCompleteColumn(),
            TextColumn("{task.fields[last]}"), TimeElapsedColumn(), console=console, transient=False,
        )
        with progress:
            task = progress.add_task("pages", total=len(refs), last="")

            def done(res: FetchResult) -> None:
                tally(res)
                progress.update(task, advance=1, last=f"{res.status:7s} {res.path.rsplit('/', 1)[-1]}")

            results = fetcher.fetch_many(list(by_path), on_done=done)
        report.requests = fetcher.requests

    for path, ref in by_path.items():
        res = results[path]
        if res.body is None:
            report.missing.append({"url": res.url, "reason": res.reason})
            continue
        try:
            doc = to_document(ref, res.url, res.body)
        except CleaningError as exc:
            report.missing.append({"url": res.url, "reason": f"unusable page: {exc}"})
            continue
        if len(doc.text) > max_doc_chars:
            report.missing.append({"url": res.url, "reason": f"document too large ({len(doc.text):,} characters; the "
                                                             f"limit is {max_doc_chars:,}, corpus.max_doc_chars)"})
            continue
        report.documents.append(doc)
    report.documents = share_meeting_labels(report.documents)
    report.missing.sort(key=lambda m: m["url"])
    report.fetched, report.cached = counts["fetched"], counts["cached"]
    report.content_hash = content_hash(report.documents)
    _refuse_to_shrink(Path(out_dir), report, allow_shrink)
    write_snapshot(
        Path(out_dir), report,
        {"corpus": name, "source": source, "years": [years.start, years.stop - 1]},
    )
    elapsed = time.perf_counter() - started
    _summary(console, report, counts, elapsed, Path(out_dir))
    return report


def mirror_cache_name(mirror: str | Path) -> str:
    """The raw-cache directory of a saved copy of the site: one per copy (by its resolved path),
    so pages read from one mirror are never served as another's."""
    resolved = str(Path(mirror).expanduser().resolve())
    return "mirror-" + hashlib.sha256(resolved.encode("utf-8")).hexdigest()[:12]


def _snapshot_ids(out_dir: Path) -> list[str]:
    """The doc_id of each document in the snapshot on disk, read from docs.jsonl itself (not the
    manifest); a line that cannot be read counts as a document with no id."""
    import json

    ids = []
    try:
        with open(out_dir / "docs.jsonl", "rb") as fh:
            for line in fh:
                if line.strip():
                    try:
                        ids.append(str(json.loads(line).get("doc_id", "")))
                    except (ValueError, AttributeError):
                        ids.append("")
    except OSError:
        return []
    return ids


def _refuse_to_shrink(out_dir: Path, report: BuildReport, allow_shrink: bool) -> None:
    """A run that got fewer documents than the snapshot on disk (the site or the network was
    down), or lacks any document the snapshot holds (a page refused as too large while another
    appeared: the same count), must not replace it: that would be silent data loss."""
    old_ids = _snapshot_ids(out_dir)
    before = len(old_ids)
    if not before:
        if not report.documents:
            raise FedlabError(
                f"no documents could be fetched ({len(report.missing)} pages missing, e.g. "
                f"{report.missing[0]['url'] if report.missing else '?'}): check the network, or set "
                "FEDLAB_MIRROR / corpus.mirror to a saved copy of the site"
            )
        return
    if len(report.documents) < before and not allow_shrink:
        raise FedlabError(
            f"this run got {len(report.documents)} documents but the snapshot in {out_dir} has {before}; "
            f"kept the snapshot ({len(report.missing)} pages missing, e.g. "
            f"{report.missing[0]['url'] + ': ' + report.missing[0]['reason'] if report.missing else '?'}). "
            "Check the network or the mirror, "
            "or pass corpus.allow_shrink=true to replace it"
        )
    lost = sorted(set(old_ids) - {d.doc_id for d in report.documents} - {""})
    if lost and not allow_shrink:
        from fedlab.corpus.calendar import minutes_path, statement_path

        example = lost[0]
        kind, _, day = example.partition("-")
        page = (statement_path if kind == "statement" else minutes_path)(day) if kind in ("statement", "minutes") else "?"
        reason = next((m["reason"] for m in report.missing if m["url"].endswith(page)), None)
        raise FedlabError(
            f"this run lacks {len(lost)} of the {before} documents in the snapshot in {out_dir} (e.g. {example}"
            f"{': ' + reason if reason else ''}); kept the snapshot. Check the network or the mirror, or pass "
            "corpus.allow_shrink=true to replace it"
        )


def _summary(console: Console, report: BuildReport, counts: dict, elapsed: float, out_dir: Path) -> None:
    table = Table(title=f"corpus {out_dir}", show_header=True)
    for col in ("statements", "minutes", "fetched", "from cache", "missing", "HTTP requests", "seconds"):
        table.add_column(col, justify="right")
    c = report.counts
    table.add_row(
        str(c["statement"]), str(c["minutes"]), str(counts["fetched"]), str(counts["cached"]),
        str(len(report.missing)), str(report.requests), f"{elapsed:.1f}",
    )
    console.print(table)
    for m in report.missing:
        console.print(f"  [yellow]missing[/] {m['url']}  ({m['reason']})")
    console.print(f"content hash [bold]{report.content_hash}[/]")
