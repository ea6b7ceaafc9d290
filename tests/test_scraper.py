"""The real scraper (httpx) against a loopback server that serves the saved site."""
from __future__ import annotations

import json
import os

import pytest
from rich.console import Console

from fedlab.corpus.calendar import minutes_path, parse_calendar, statement_path
from fedlab.corpus.fetch import PageCache, PageFetcher, parse_retry_after
from fedlab.corpus.ingest import run_ingest
from sitefaults import FaultySite

QUIET = Console(file=open(os.devnull, "w"))
S_0131 = statement_path("2024-01-31")
M_0320 = minutes_path("2024-03-20")
S_0501 = statement_path("2024-05-01")
M_0612 = minutes_path("2024-06-12")
S_0731 = statement_path("2024-07-31")
M_0918 = minutes_path("2024-09-18")
S_1107 = statement_path("2024-11-07")
M_1218 = minutes_path("2024-12-18")


def _ingest(tmp_path, base_url, sleeps, years=range(2024, 2025), **fetch):
    params = dict(timeout_s=1.0, max_attempts=3, backoff_s=0.01, concurrency=4, sleep=sleeps.append)
    params.update(fetch)
    return run_ingest(
        name="fomc", base_url=base_url, out_dir=tmp_path / "corpus", raw_cache_dir=tmp_path / "raw",
        years=years, fetch=params, console=QUIET,
    )


def test_faults_lose_nothing_that_could_be_fetched(tmp_path, site_dir):
    calendar_refs, _ = parse_calendar((site_dir / "monetarypolicy/fomccalendars.htm").read_bytes())
    expected = {r.path for r in calendar_refs if r.meeting_date.startswith("2024")}
    faults = {
        S_0131: ["429", "ok"],  # rate limited once, with Retry-After: 1
        M_0320: ["500", "ok"],  # server error then fine
        S_0501: ["hang", "ok"],  # hangs past the client timeout once
        M_0612: ["truncate", "ok"],  # connection drops mid-body once
        S_0731: ["no_html_end"],  # always a truncated page
        M_0918: ["pdf"],  # not HTML
        S_1107: ["404"],  # gone
        M_1218: ["500"],  # never recovers
    }
    sleeps: list[float] = []
    with FaultySite(site_dir, faults, hang_s=2.5) as site:
        report = _ingest(tmp_path, site.url, sleeps)
        got = {d.url.removeprefix(site.url) for d in report.documents}
        missing = {m["url"].removeprefix(site.url): m["reason"] for m in report.missing}
        assert got == expected - {S_0731, M_0918, S_1107, M_1218}
        assert {S_0731, M_0918, S_1107, M_1218} <= set(missing)
        assert "truncated" in missing[S_0731]
        assert "not HTML" in missing[M_0918]
        assert missing[S_1107] == "HTTP 404"
        assert "HTTP 500" in missing[M_1218] and "3 attempt" in missing[M_1218]
        assert 1.0 in sleeps, "Retry-After: 1 was not honoured"
        assert site.hits[S_1107] == 1, "a 404 must not be retried"
        assert site.hits[M_0918] == 1, "a wrong content type must not be retried"
        assert any(ua.startswith("fedlab/") for ua in site.user_agents)
        # The snapshot on disk is complete and consistent with the report.
        rows = [json.loads(x) for x in (tmp_path / "corpus" / "docs.jsonl").read_text().splitlines()]
        manifest = json.loads((tmp_path / "corpus" / "manifest.json").read_text())
        assert len(rows) == len(report.documents) == manifest["counts"]["total"]
        assert {m["url"] for m in manifest["missing"]} == {m["url"] for m in report.missing}

        # A second run asks nothing for the pages (and the fresh calendar) it already has. A
        # failure is never cached as content — a missing page may be back next time — so
        # exactly the pages that were missing are asked for again, and are still missing.
        before = dict(site.hits)
        again = _ingest(tmp_path, site.url, [])
        asked = {p: n - before.get(p, 0) for p, n in site.hits.items() if n != before.get(p, 0)}
        assert set(asked) == {S_0731, M_0918, S_1107, M_1218}
        assert again.requests == sum(asked.values())
        assert again.fetched == 0 and again.cached == len(report.documents) + 1  # + the calendar
        assert {m["url"] for m in again.missing} == {m["url"] for m in report.missing}
        assert again.content_hash == report.content_hash


def test_historical_calendar_used_for_years_the_main_calendar_omits(tmp_path, site_dir):
    with FaultySite(site_dir) as site:
        report = _ingest(tmp_path, site.url, [], years=range(2020, 2022))
    missing = {m["url"].removeprefix(site.url) for m in report.missing}
    # 2020 is not on the main calendar: its historical page was asked for (and is not saved).
    assert "/monetarypolicy/fomchistorical2020.htm" in missing
    assert site.hits["/monetarypolicy/fomchistorical2020.htm"] == 1
    assert "/monetarypolicy/fomchistorical2021.htm" not in site.hits
    assert report.documents and all(d.meeting_date.startswith("2021") for d in report.documents)


def test_mirror_reads_every_saved_page(tmp_path, mirror_dir):
    report = run_ingest(
        name="fomc", base_url="https://www.federalreserve.gov", out_dir=tmp_path / "c",
        raw_cache_dir=tmp_path / "raw", years=range(2019, 2026), mirror=str(mirror_dir), console=QUIET,
    )
    assert report.counts == {"statement": 60, "minutes": 55, "total": 115}
    assert len({d.doc_id for d in report.documents}) == 115
    missing = {m["url"] for m in report.missing}
    assert "https://www.federalreserve.gov/newsevents/pressreleases/monetary20250129a.htm" in missing
    by_id = {d.doc_id: d for d in report.documents}
    # Calendar metadata where the calendar lists the meeting; the page's own data otherwise.
    assert by_id["minutes-2024-01-31"].release_date == "2024-02-21"
    assert by_id["minutes-2019-01-30"].release_date == "2019-02-20"
    assert by_id["statement-2024-01-31"].release_date == "2024-01-31"
    assert by_id["minutes-2024-01-31"].meeting.startswith("January 30")


def _damaged_copy(site_dir, root):
    """Part of the saved site, damaged: the calendar and some 2024 pages, one statement's text
    altered (still a whole page), one minutes page cut short; the other 2024 pages absent."""
    site = root / "www.federalreserve.gov"
    for path in ("/monetarypolicy/fomccalendars.htm", S_0131, M_0320, S_0501, minutes_path("2024-01-31")):
        (site / path.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
        (site / path.lstrip("/")).write_bytes((site_dir / path.lstrip("/")).read_bytes())
    statement = site / S_0131.lstrip("/")
    statement.write_bytes(statement.read_bytes().replace(b"5-1/4 to 5-1/2 percent", b"9 to 10 percent"))
    minutes = site / M_0320.lstrip("/")
    minutes.write_bytes(minutes.read_bytes()[: minutes.stat().st_size // 2])
    return root


def test_raw_cache_is_per_source_and_never_keeps_a_failure(tmp_path, mirror_dir, site_dir):
    def ingest(mirror, data, out=None):
        return run_ingest(
            name="fomc", base_url="https://www.federalreserve.gov", out_dir=out or data / "corpus",
            raw_cache_dir=data / "raw", years=range(2024, 2025), mirror=str(mirror),
            fetch={"backoff_s": 0.0, "max_attempts": 2}, console=QUIET,
        )

    clean = ingest(mirror_dir, tmp_path / "clean")
    damaged_mirror = _damaged_copy(site_dir, tmp_path / "damaged-mirror")
    data = tmp_path / "data"
    damaged = ingest(damaged_mirror, data)
    by_id = {d.doc_id: d for d in damaged.documents}
    assert "9 to 10 percent" in by_id["statement-2024-01-31"].text
    assert "truncated" in {m["url"]: m["reason"] for m in damaged.missing}[f"https://www.federalreserve.gov{M_0320}"]
    assert damaged.content_hash != clean.content_hash

    # The good mirror into the same raw cache and snapshot: nothing read from the damaged copy
    # is reused, the pages it lacked or had cut short are asked for, the good source is named.
    good = ingest(mirror_dir, data)
    assert good.requests >= len(clean.documents) and good.cached == 0
    manifest = json.loads((data / "corpus" / "manifest.json").read_text())
    assert manifest["source"] == f"mirror:{mirror_dir.resolve()}"
    assert good.content_hash == clean.content_hash == manifest["content_hash"]
    assert (data / "corpus" / "docs.jsonl").read_bytes() == (tmp_path / "clean" / "corpus" / "docs.jsonl").read_bytes()

    # The damaged copy again (another snapshot, same raw cache): its pages come from its own
    # cache, one per mirror; its failures were not cached, so they alone are asked again.
    assert len([p for p in (data / "raw").iterdir() if p.name.startswith("mirror-")]) == 2
    second = ingest(damaged_mirror, data, out=tmp_path / "other")
    assert second.content_hash == damaged.content_hash
    assert second.fetched == 0 and second.cached == len(damaged.documents) + 1  # + the calendar
    # 2 attempts for the truncated page, 1 for each page the copy lacks (a 404 is not retried)
    assert second.requests == 2 + sum(1 for m in damaged.missing if m["reason"] == "HTTP 404")


def test_unwritable_mirror_is_one_line_error(tmp_path):
    from fedlab.errors import FedlabError

    with pytest.raises(FedlabError, match="not a directory"):
        run_ingest(
            name="fomc", base_url="https://www.federalreserve.gov", out_dir=tmp_path / "c",
            raw_cache_dir=tmp_path / "raw", years=range(2024, 2025), mirror=str(tmp_path / "nope"), console=QUIET,
        )


def test_damaged_cache_entry_is_refetched(tmp_path, site_dir):
    cache = PageCache(tmp_path)
    with FaultySite(site_dir) as site, PageFetcher(site.url, cache=cache, sleep=lambda s: None) as f:
        first = f.fetch(S_0131)
        assert first.status == "fetched"
        body_file = tmp_path / S_0131.lstrip("/")
        body_file.write_bytes(body_file.read_bytes()[:100])  # damage it
        second = f.fetch(S_0131)
        assert second.status == "fetched" and second.body == first.body
        assert site.hits[S_0131] == 2
        assert f.fetch(S_0131).status == "cached"


@pytest.mark.parametrize(
    "value,expected",
    [("3", 3.0), ("0", 0.0), (None, None), ("soon", None), ("Wed, 21 Oct 2015 07:28:00 GMT", 0.0)],
)
def test_retry_after_parsing(value, expected):
    got = parse_retry_after(value)
    assert got == expected if expected is None else got >= expected


def test_a_failed_run_never_replaces_a_good_snapshot(tmp_path, site_dir):
    from fedlab.errors import FedlabError

    with FaultySite(site_dir) as site:
        good = _ingest(tmp_path, site.url, [])
    before = (tmp_path / "corpus" / "docs.jsonl").read_bytes()
    # The site is gone: every page times out or is refused.
    with pytest.raises(FedlabError, match="kept the snapshot"):
        _ingest(tmp_path, "http://127.0.0.1:9", [], max_attempts=1, timeout_s=0.2)
    assert (tmp_path / "corpus" / "docs.jsonl").read_bytes() == before
    assert len(good.documents) > 10


# -- size limits ----------------------------------------------------------------------------------

@pytest.mark.parametrize("action,said", [("huge", "page too large (1.1 MB; the limit is 0.5 MB"),
                                         ("huge_stream", "page too large (over 0.5 MB; the limit is 0.5 MB")])
def test_an_oversize_page_is_refused_not_retried_and_not_kept(tmp_path, site_dir, action, said):
    """A 50 MB statement page became a 47M-character document (65,133 chunks, 6 GB in an evaluation)."""
    with FaultySite(site_dir, {S_0131: [action]}) as site:
        with PageFetcher(site.url, cache=PageCache(tmp_path / "raw"), max_page_mb=0.5, sleep=lambda s: None) as f:
            res = f.fetch(S_0131)
            assert res.status == "missing" and res.body is None and res.reason.startswith(said), res.reason
            assert "corpus.fetch.max_page_mb" in res.reason
            assert site.hits[S_0131] == 1  # it will not fix itself
            assert f.fetch(M_0320).status == "fetched"  # pages under the limit are read as before
    assert not (tmp_path / "raw" / S_0131.lstrip("/")).exists()


def test_an_oversize_page_never_replaces_a_good_snapshot(tmp_path, site_dir):
    """Also when the document count stays the same: the earlier run lacked one page (a 404), this one
    has it back but refuses another as too large. Each run reads the site afresh (its own raw cache)."""
    from fedlab.errors import FedlabError

    def ingest(faults, raw):
        with FaultySite(site_dir, faults) as site:
            return run_ingest(name="fomc", base_url=site.url, out_dir=tmp_path / "corpus", raw_cache_dir=tmp_path / raw,
                              years=range(2024, 2025), fetch={"max_attempts": 1, "max_page_mb": 0.5}, console=QUIET)

    good = ingest({S_1107: ["404"]}, "raw1")
    before = (tmp_path / "corpus" / "docs.jsonl").read_bytes()
    with pytest.raises(FedlabError) as err:
        ingest({S_0131: ["huge"]}, "raw2")  # S_1107 is back, S_0131 is refused: the same count
    message = str(err.value)
    assert "lacks 1 of the" in message and "statement-2024-01-31" in message and "page too large" in message
    assert "kept the snapshot" in message and "\n" not in message
    with pytest.raises(FedlabError, match="kept the snapshot .*page too large"):
        ingest({S_0131: ["huge_stream"], S_1107: ["404"]}, "raw3")  # one fewer document
    assert (tmp_path / "corpus" / "docs.jsonl").read_bytes() == before
    assert len(good.documents) > 10


def test_an_oversize_document_is_refused(tmp_path, site_dir):
    with FaultySite(site_dir) as site:
        report = run_ingest(name="fomc", base_url=site.url, out_dir=tmp_path / "corpus", raw_cache_dir=tmp_path / "raw",
                            years=range(2024, 2025), console=QUIET, max_doc_chars=30_000)
    too_large = [m for m in report.missing if m["reason"].startswith("document too large")]
    assert too_large and all("minutes" in m["url"] for m in too_large)  # minutes run past 30,000 characters
    assert "corpus.max_doc_chars" in too_large[0]["reason"]
    assert report.documents and all(len(d.text) <= 30_000 for d in report.documents)
