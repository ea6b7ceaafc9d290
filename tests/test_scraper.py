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

        # A second run fetches nothing: pages and recent "missing" answers come from the cache.
        before = dict(site.hits)
        again = _ingest(tmp_path, site.url, [])
        assert dict(site.hits) == before
        assert again.requests == 0
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
