"""A polite, retrying, caching page fetcher (httpx).

The site is reached through an httpx transport: the live site over the network, or a saved
copy laid out by URL path (:class:`MirrorTransport`). Everything above the transport — retries,
the raw-page cache, discovery and cleaning — is the same code either way.
"""
from __future__ import annotations

import email.utils
import hashlib
import json
import logging
import mimetypes
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

import httpx

from fedlab import io

log = logging.getLogger(__name__)

DEFAULT_USER_AGENT = "fedlab/0.1 (FOMC research corpus builder; polite crawler)"
RETRY_STATUSES = {429, 500, 502, 503, 504}
# The largest statement or minutes page is under 0.2 MB; a page far past that is not one (a 50 MB
# page became a 47M-character document, 65,133 chunks instead of 3,080, 6 GB in an evaluation).
DEFAULT_MAX_PAGE_MB = 5.0


def too_large(size: int | str, limit_bytes: int, more: bool = False) -> str:
    """The reason a page of ``size`` bytes (``more``: at least that) is refused."""
    size = f"{int(size) / 2 ** 20:.1f} MB" if str(size).isdigit() else str(size)
    return (f"page too large ({'over ' if more else ''}{size}; the limit is {limit_bytes / 2 ** 20:g} MB, "
            "corpus.fetch.max_page_mb)")


@dataclass(frozen=True)
class FetchResult:
    path: str  # URL path, e.g. /monetarypolicy/fomccalendars.htm
    url: str
    status: str  # "fetched" | "cached" | "missing"
    body: bytes | None = None
    reason: str | None = None  # why it is missing
    attempts: int = 0


class MirrorTransport(httpx.BaseTransport):
    """Serves a saved copy of a site laid out by URL path, as the live site would: 404 if absent."""

    def __init__(self, root: str | Path):
        self.root = Path(root).resolve()
        if not self.root.is_dir():
            raise FileNotFoundError(f"mirror directory not found: {self.root}")

    def site_root(self, host: str) -> Path:
        return self.root / host if (self.root / host).is_dir() else self.root

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        base = self.site_root(request.url.host)
        target = (base / request.url.path.lstrip("/")).resolve()
        if base not in target.parents or not target.is_file():
            return httpx.Response(404, text="not found", request=request)
        ctype = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
        if ctype == "text/html":
            ctype = "text/html; charset=utf-8"
        return httpx.Response(200, content=target.read_bytes(), headers={"content-type": ctype}, request=request)


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (now if now is not None else time.time()))


class PageCache:
    """Raw pages on disk, by URL path, with a sidecar recording time and checksum.

    One cache per source (the caller picks ``root``: the live site's host, or one directory per
    saved copy of the site). Only pages that arrived are stored: a failure (404, timeout,
    truncated page...) is never cached, so the next run asks again. Pages are kept for good,
    except those marked volatile (the calendars, which gain meetings), trusted only for
    ``ttl_s``. A body whose checksum no longer matches its sidecar is treated as absent and
    fetched again.
    """

    def __init__(self, root: str | Path, ttl_s: float = 24 * 3600):
        self.root = Path(root)
        self.ttl_s = ttl_s

    def _paths(self, path: str) -> tuple[Path, Path]:
        rel = path.lstrip("/") or "index.html"
        body = self.root / rel
        return body, body.with_name(body.name + ".meta.json")

    def get(self, path: str, volatile: bool = False) -> FetchResult | None:
        body_path, meta_path = self._paths(path)
        try:
            meta = json.loads(meta_path.read_text())
        except (OSError, ValueError):
            return None
        fresh = time.time() - meta.get("fetched_at", 0) < self.ttl_s
        if meta.get("status") == "missing" or "sha256" not in meta:
            return None  # a failure recorded by an older version: ask again
        if volatile and not fresh:
            return None
        try:
            body = body_path.read_bytes()
        except OSError:
            return None
        if hashlib.sha256(body).hexdigest() != meta.get("sha256"):
            log.warning("cache entry for %s is damaged; fetching it again", path)
            return None
        return FetchResult(path, meta["url"], "cached", body=body)

    def put(self, result: FetchResult) -> None:
        """Store a page that arrived; a failure (no body) is not content and is not stored."""
        if result.body is None:
            return
        body_path, meta_path = self._paths(result.path)
        io.write_bytes(body_path, result.body)
        meta = {"url": result.url, "status": "fetched", "fetched_at": time.time(),
                "sha256": hashlib.sha256(result.body).hexdigest()}
        io.write_json(meta_path, meta)


class PageFetcher:
    """GETs pages with timeouts, bounded concurrency, retries with backoff, and a cache."""

    def __init__(
        self,
        base_url: str,
        cache: PageCache | None = None,
        transport: httpx.BaseTransport | None = None,
        timeout_s: float = 20.0,
        max_attempts: int = 4,
        backoff_s: float = 1.0,
        max_wait_s: float = 60.0,
        concurrency: int = 4,
        user_agent: str = DEFAULT_USER_AGENT,
        sleep: Callable[[float], None] = time.sleep,
        max_page_mb: float = DEFAULT_MAX_PAGE_MB,
    ):
        self.base_url = base_url.rstrip("/")
        self.max_page_bytes = int(max_page_mb * 2 ** 20)  # a larger page is not read past this, nor kept
        self.cache = cache
        self.max_attempts = max_attempts
        self.backoff_s = backoff_s
        self.max_wait_s = max_wait_s
        self.concurrency = concurrency
        self.sleep = sleep
        self.requests = 0
        self._lock = threading.Lock()
        self.client = httpx.Client(
            base_url=self.base_url,
            transport=transport,
            timeout=httpx.Timeout(timeout_s),
            headers={"User-Agent": user_agent, "Accept": "text/html"},
            follow_redirects=True,
            limits=httpx.Limits(max_connections=concurrency),
        )

    def close(self) -> None:
        self.client.close()

    def __enter__(self) -> "PageFetcher":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def fetch(self, path: str, volatile: bool = False) -> FetchResult:
        if self.cache is not None:
            hit = self.cache.get(path, volatile=volatile)
            if hit is not None and len(hit.body) <= self.max_page_bytes:  # kept before the limit: asked again
                return hit
        result = self._get(path)
        if self.cache is not None:
            self.cache.put(result)  # stores pages only: a failure is asked for again next run
        return result

    def fetch_many(
        self, paths: Iterable[str], on_done: Callable[[FetchResult], None] | None = None
    ) -> dict[str, FetchResult]:
        results: dict[str, FetchResult] = {}

        def one(path: str) -> None:
            res = self.fetch(path)
            results[path] = res
            if on_done is not None:
                on_done(res)

        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            list(pool.map(one, paths))
        return results

    def _wait(self, attempt: int, retry_after: float | None) -> None:
        delay = retry_after if retry_after is not None else self.backoff_s * 2 ** (attempt - 1)
        self.sleep(min(delay, self.max_wait_s))

    def _get(self, path: str) -> FetchResult:
        url = f"{self.base_url}{path}"
        reason = "no attempt made"
        for attempt in range(1, self.max_attempts + 1):
            with self._lock:
                self.requests += 1
            retry_after = None
            try:
                resp, body = self._read(path)
            except httpx.TimeoutException:
                reason = "timed out"
            except httpx.TransportError as exc:  # refused, reset, truncated body (length mismatch)
                reason = f"transport error: {type(exc).__name__}"
            else:
                if resp.status_code == 200:
                    problem = _check_html(resp, body) if isinstance(body, bytes) else body
                    if problem is None:
                        return FetchResult(path, url, "fetched", body=body, attempts=attempt)
                    reason = problem
                    if problem.startswith(("not HTML", "page too large")):
                        break  # a wrong content type or an oversize page will not fix itself
                elif resp.status_code in RETRY_STATUSES:
                    reason = f"HTTP {resp.status_code}"
                    retry_after = parse_retry_after(resp.headers.get("retry-after"))
                else:
                    return FetchResult(path, url, "missing", reason=f"HTTP {resp.status_code}", attempts=attempt)
            if attempt < self.max_attempts:
                log.info("retrying %s after %s (attempt %d)", path, reason, attempt)
                self._wait(attempt, retry_after)
        return FetchResult(path, url, "missing", reason=f"{reason} after {attempt} attempt(s)", attempts=attempt)


    def _read(self, path: str) -> tuple[httpx.Response, bytes | str]:
        """(the response, its body) — or, for a 200 page larger than ``max_page_bytes``, the reason
        it is refused instead of the body: by its Content-Length before any of it is read, else as
        soon as what has arrived passes the limit (the rest is never read)."""
        with self.client.stream("GET", path) as resp:
            if resp.status_code != 200:
                return resp, b""
            declared = resp.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > self.max_page_bytes:
                return resp, too_large(declared, self.max_page_bytes)
            chunks, size = [], 0
            for chunk in resp.iter_bytes():
                chunks.append(chunk)
                size += len(chunk)
                if size > self.max_page_bytes:
                    return resp, too_large(self.max_page_bytes, self.max_page_bytes, more=True)
            return resp, b"".join(chunks)


def _check_html(resp: httpx.Response, body: bytes) -> str | None:
    ctype = resp.headers.get("content-type", "")
    if "html" not in ctype.lower():
        return f"not HTML (content-type {ctype or 'missing'})"
    tail = body[-4096:].lower()
    if b"</html>" not in tail:
        return "truncated page (no closing </html>)"
    return None
