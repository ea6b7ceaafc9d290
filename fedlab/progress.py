"""Progress of long loops, in a terminal and in a log file alike — always on stderr, never stdout.

Contract and design notes: docs/commands.md#design-notes-fedlabprogresspy.
"""
from __future__ import annotations

import logging
import sys
import threading
import time
from typing import Callable, Sequence

log = logging.getLogger("fedlab.progress")
DEFAULT_INTERVAL_S = 30.0


class _CurrentStderrHandler(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is now (like logging's lastResort), never stdout."""

    def __init__(self, level: int = logging.INFO):
        logging.Handler.__init__(self, level)

    @property
    def stream(self):  # type: ignore[override]
        return sys.stderr


_fallback = _CurrentStderrHandler()
_last_note = 0.0  # time.monotonic() of the last line note() logged (the heartbeat's reference)


def format_duration(seconds: float) -> str:
    """0:01:23 (hours:minutes:seconds, as rich shows them)."""
    s = max(0, int(seconds))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


def _isatty(stream) -> bool:
    stream = getattr(stream, "rich_proxied_file", stream)  # sys.stderr while a rich bar is live
    try:
        return bool(stream is not None and stream.isatty())
    except (AttributeError, ValueError):  # closed or not a file
        return False


def _handlers(logger: logging.Logger) -> list[logging.Handler]:
    """The handlers a record from ``logger`` reaches (the walk of ``Logger.callHandlers``)."""
    found: list[logging.Handler] = []
    c: logging.Logger | None = logger
    while c is not None:
        found.extend(c.handlers)
        if not c.propagate:
            break
        c = c.parent  # type: ignore[assignment]
    return found


def _writes_to_terminal(handler: logging.Handler) -> bool:
    return (isinstance(handler, logging.StreamHandler) and not isinstance(handler, logging.FileHandler)
            and _isatty(getattr(handler, "stream", None)))


def note(logger: logging.Logger, message: str, *, skip_terminal: bool = False) -> None:
    """Log ``message`` at INFO on ``logger``; on stderr when logging is not configured at all.

    ``skip_terminal``: leave out handlers writing to a terminal (a bar is on screen there).
    """
    global _last_note
    _last_note = time.monotonic()
    handlers = _handlers(logger)
    if not handlers:  # nothing configured: Python would drop an INFO record
        if not (skip_terminal and _isatty(sys.stderr)):
            _fallback.handle(logger.makeRecord(logger.name, logging.INFO, __file__, 0, message, (), None))
        return
    if not logger.isEnabledFor(logging.INFO):
        return
    if not skip_terminal:
        logger.info(message)
        return
    record = logger.makeRecord(logger.name, logging.INFO, __file__, 0, message, (), None)
    if not logger.filter(record):
        return
    for h in handlers:
        if not _writes_to_terminal(h) and record.levelno >= h.level:
            h.handle(record)


def _rate_text(rate: float | None) -> str:
    if not rate:
        return "-"
    return f"{rate:,.1f}" if rate >= 1 else f"{rate:.2f}"


class Progress:
    """Progress of one loop of ``total`` steps; ``with Progress(...) as advance: advance(n)``."""

    def __init__(self, description: str, total: int, unit: str = "items", enabled: bool = True, *,
                 interval_s: float = DEFAULT_INTERVAL_S, clock: Callable[[], float] = time.monotonic,
                 logger: logging.Logger | None = None, console=None):
        self.description = description
        self.total = max(0, int(total))
        self.unit = unit
        self.enabled = bool(enabled)
        self.interval_s = float(interval_s)
        self.clock = clock
        self.logger = logger or log
        self.console = console  # a rich Console; default: one on stderr
        self.done = 0
        self._start = self._last_line = 0.0
        self._bar = None
        self._task = None

    # ---- the numbers ---------------------------------------------------
    def elapsed(self) -> float:
        return max(0.0, self.clock() - self._start)

    def rate(self) -> float | None:
        elapsed = self.elapsed()
        return self.done / elapsed if elapsed > 0 and self.done else None

    def line(self, status: str | None = None) -> str:
        """``description: M/N unit (P%) R/s elapsed H:MM:SS ETA H:MM:SS`` (ETA while running)."""
        total = f"/{self.total:,}" if self.total else ""
        pct = f" ({100 * self.done // self.total}%)" if self.total else ""
        text = f"{self.description}: {self.done:,}{total} {self.unit}{pct}"
        if status == "started":
            return f"{text} started"
        rate = self.rate()
        text += f" {_rate_text(rate)}/s elapsed {format_duration(self.elapsed())}"
        if status is None:
            eta = format_duration((self.total - self.done) / rate) if rate and self.total else "?"
            text += f" ETA {eta}"
        else:
            text += f" {status}"
        return text

    # ---- the loop ------------------------------------------------------
    def __enter__(self) -> Callable[[int], None]:
        if not self.enabled:
            return lambda n=1: None
        self._start = self._last_line = self.clock()
        self._bar = self._start_bar()
        note(self.logger, self.line("started"), skip_terminal=self._bar is not None)
        return self.advance

    def advance(self, n: int = 1) -> None:
        if not self.enabled:
            return
        self.done += int(n)
        if self._bar is not None:
            self._bar.advance(self._task, n)
        now = self.clock()
        if now - self._last_line >= self.interval_s and (not self.total or self.done < self.total):
            self._last_line = now
            note(self.logger, self.line(), skip_terminal=self._bar is not None)

    def __exit__(self, exc_type, exc, tb) -> bool:
        if not self.enabled:
            return False
        shown = self._bar is not None
        if shown:
            self._bar.stop()
            self._bar = None
        status = "done" if exc_type is None else f"stopped ({exc_type.__name__})"
        note(self.logger, self.line(status), skip_terminal=shown)
        return False

    def _start_bar(self):
        """A rich bar on the console (stderr) when it is a terminal; None otherwise."""
        from rich.console import Console

        console = self.console or Console(stderr=True)
        if not console.is_terminal:
            return None
        from rich.progress import (BarColumn, MofNCompleteColumn, Progress as RichProgress, TextColumn,
                                   TimeElapsedColumn, TimeRemainingColumn)

        bar = RichProgress(TextColumn("{task.description}", markup=False), BarColumn(), MofNCompleteColumn(), _rate_column(),
                           TextColumn("elapsed"), TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                           console=console, transient=True, redirect_stdout=False, get_time=self.clock)
        try:
            bar.start()
        except Exception:  # another live display is on (rich allows one): the log lines remain
            return None
        self._task = bar.add_task(self.description, total=self.total or None)
        return bar


def _rate_column():
    from rich.progress import ProgressColumn
    from rich.text import Text

    class RateColumn(ProgressColumn):
        """Steps per second (rich's own speed column counts bytes)."""

        def render(self, task):
            speed = task.finished_speed or task.speed
            return Text(f"{_rate_text(speed)}/s", style="progress.data.speed")

    return RateColumn()


def progress(description: str, total: int, unit: str = "items", enabled: bool = True, *,
             interval_s: float = DEFAULT_INTERVAL_S, clock: Callable[[], float] = time.monotonic,
             logger: logging.Logger | None = None, console=None) -> Progress:
    """``with progress("embedding (minilm)", n, unit="passages") as advance: … advance(k)``."""
    return Progress(description, total, unit, enabled, interval_s=interval_s, clock=clock,
                    logger=logger, console=console)


def config_line(i: int, n: int | None, overrides: Sequence[str], elapsed_s: float | None = None) -> str:
    """``config 3 of 72: retriever=bm25 chunker.size=128 (sweep elapsed 0:04:10, ETA 0:55:00)``;
    the ETA assumes the remaining configs cost what the finished ones did on average."""
    text = f"config {i:,}" + (f" of {n:,}" if n else "") + (f": {' '.join(overrides)}" if overrides else "")
    if elapsed_s is not None:
        text += f" (sweep elapsed {format_duration(elapsed_s)}"
        if n and i > 1:
            text += f", ETA {format_duration(elapsed_s / (i - 1) * (n - i + 1))}"
        text += ")"
    return text


class Heartbeat:
    """``with Heartbeat("chunking …"):`` — a line whenever the log was silent for ``interval_s``.

    ``tick()`` applies the rule once (a background thread calls it every ``interval_s / 3``);
    ``last_line`` is when anything was last logged through ``note`` (default: this module's
    record of it), so a step that reports its own progress gets no extra lines."""

    def __init__(self, description: str, *, interval_s: float = DEFAULT_INTERVAL_S,
                 clock: Callable[[], float] = time.monotonic, last_line: Callable[[], float] | None = None,
                 logger: logging.Logger | None = None):
        self.description = description
        self.interval_s = float(interval_s)
        self.clock = clock
        self.last_line = last_line or (lambda: _last_note)
        self.logger = logger or log
        self._start = self.clock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def tick(self) -> bool:
        """Log a line if nothing was logged for ``interval_s``; whether it did."""
        now = self.clock()
        if now - max(self.last_line(), self._start) < self.interval_s:
            return False
        note(self.logger, f"{self.description}: still running, elapsed {format_duration(now - self._start)}",
             skip_terminal=_isatty(sys.stderr))
        return True

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s / 3):
            self.tick()

    def __enter__(self) -> "Heartbeat":
        self._start = self.clock()
        self._thread = threading.Thread(target=self._run, name="fedlab-heartbeat", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> bool:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        return False


def heartbeat(description: str, *, interval_s: float = 1.5 * DEFAULT_INTERVAL_S) -> Heartbeat:
    """A Heartbeat that speaks after 45 s of silence: a step with a progress of its own (a line
    every 30 s) gets no extra lines, and the log still hears from a silent step within a minute."""
    return Heartbeat(description, interval_s=interval_s)
