"""fedlab.progress: the once-per-interval log rule (fake clock), the line format, where lines go
(never stdout; stderr when logging is not configured; files but not the terminal under a bar),
and the real embedder and pipeline stages reporting through it."""
from __future__ import annotations

import contextlib
import io
import logging
import re
from pathlib import Path

import pytest
from hydra.utils import instantiate
from omegaconf import OmegaConf
from rich.console import Console

from fedlab.cache import ArtifactCache
from fedlab.chunking.factory import instantiate_chunker
from fedlab.corpus.document import Document
from fedlab.corpus.snapshot import Corpus
from fedlab.pipeline import BuildInfo, chunk_corpus, embed_chunks
from fedlab.progress import format_duration, note, progress

ROOT = Path(__file__).resolve().parent.parent
LINE_RE = re.compile(r"^(?P<desc>.+): (?P<m>[\d,]+)/(?P<n>[\d,]+) (?P<unit>\w+) \((?P<pct>\d+)%\) "
                     r"(?P<rate>[\d.,]+)/s elapsed (?P<elapsed>\d+:\d\d:\d\d) ETA (?P<eta>\d+:\d\d:\d\d)$")


class FakeClock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class ListHandler(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record):
        self.lines.append(record.getMessage())


@pytest.fixture
def captured():
    """A logger of its own (not propagating) with a handler that keeps the messages."""
    logger = logging.getLogger("test_progress.captured")
    logger.propagate = False
    logger.setLevel(logging.INFO)
    handler = ListHandler()
    logger.addHandler(handler)
    yield logger, handler
    logger.removeHandler(handler)


@contextlib.contextmanager
def unconfigured(*names: str):
    """Loggers that reach no handler at all, as in `python -m fedlab.ask` (logging never set up).

    Entered inside the test body: pytest attaches its capture handlers to every logger that is
    non-propagating when a test phase starts."""
    loggers = [logging.getLogger(n) for n in names]
    saved = [lg.propagate for lg in loggers]
    try:
        for lg in loggers:
            lg.propagate = False
            assert not lg.handlers
        yield loggers[0]
    finally:
        for lg, p in zip(loggers, saved):
            lg.propagate = p


def run_loop(logger, clock, total, steps, step_s, n=1, interval_s=30.0, **kw):
    with progress("embedding (test)", total, interval_s=interval_s, clock=clock, logger=logger, **kw) as advance:
        for _ in range(steps):
            clock.now += step_s
            advance(n)


def test_interval_rule_finished_loop(captured, capsys):
    """150 one-second steps of 150: start, lines at 30/60/90/120 s (150 s is the final line's), end."""
    logger, handler = captured
    run_loop(logger, FakeClock(), total=150, steps=150, step_s=1.0)
    lines = handler.lines
    assert len(lines) == 6
    assert lines[0] == "embedding (test): 0/150 items (0%) started"
    interim = [LINE_RE.match(x) for x in lines[1:-1]]
    assert all(interim), lines
    assert [m["elapsed"] for m in interim] == ["0:00:30", "0:01:00", "0:01:30", "0:02:00"]
    assert [m["m"] for m in interim] == ["30", "60", "90", "120"]
    assert interim[0]["pct"] == "20" and interim[0]["rate"] == "1.0" and interim[0]["eta"] == "0:02:00"
    assert lines[-1] == "embedding (test): 150/150 items (100%) 1.0/s elapsed 0:02:30 done"
    assert capsys.readouterr().out == ""


def test_interval_rule_unfinished_loop_and_uneven_steps(captured):
    """Half of 300 done in 150 s: a line every 30 s, ETA from the rate; with 7-second steps the
    lines are at least 30 s and at most 37 s apart (so comfortably once a minute)."""
    logger, handler = captured
    run_loop(logger, FakeClock(), total=300, steps=150, step_s=1.0)
    assert len(handler.lines) == 1 + 5 + 1
    last = LINE_RE.match(handler.lines[-2])
    assert last and last["m"] == "150" and last["n"] == "300" and last["eta"] == "0:02:30"
    assert handler.lines[-1].endswith("elapsed 0:02:30 done")

    handler.lines.clear()
    run_loop(logger, FakeClock(), total=10_000, steps=22, step_s=7.0, n=100)  # 154 s
    elapsed = [LINE_RE.match(x)["elapsed"] for x in handler.lines[1:-1]]
    assert elapsed == ["0:00:35", "0:01:10", "0:01:45", "0:02:20"]
    assert handler.lines[1].startswith("embedding (test): 500/10,000 items (5%) 14.3/s elapsed 0:00:35 ETA 0:11:05")


def test_interrupted_loop_says_so(captured):
    logger, handler = captured
    clock = FakeClock()
    with pytest.raises(KeyboardInterrupt):
        with progress("evaluating", 40, unit="questions", clock=clock, logger=logger) as advance:
            clock.now += 2
            advance(3)
            raise KeyboardInterrupt
    assert handler.lines[-1] == "evaluating: 3/40 questions (7%) 1.5/s elapsed 0:00:02 stopped (KeyboardInterrupt)"


def test_disabled_is_silent(captured, capsys):
    logger, handler = captured
    run_loop(logger, FakeClock(), total=100, steps=100, step_s=1.0, enabled=False)
    assert handler.lines == []
    assert capsys.readouterr() == ("", "")


def test_unconfigured_logging_writes_lines_to_stderr_never_stdout(capsys):
    with unconfigured("test_progress.unconfigured") as logger:
        run_loop(logger, FakeClock(), total=90, steps=90, step_s=1.0)
        note(logger, "building embeddings (test) for 90 chunks — not in the cache yet")
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.splitlines()
    assert lines[0] == "embedding (test): 0/90 items (0%) started"
    assert [LINE_RE.match(x)["elapsed"] for x in lines[1:3]] == ["0:00:30", "0:01:00"]
    assert lines[3].endswith("(100%) 1.0/s elapsed 0:01:30 done")
    assert lines[4] == "building embeddings (test) for 90 chunks — not in the cache yet"


def test_configured_logging_gets_the_lines_once(tmp_path, capsys):
    """As under Hydra: a file handler up the hierarchy takes the lines; no extra stderr copy."""
    parent = logging.getLogger("test_progress.hydra")
    parent.propagate = False
    parent.setLevel(logging.INFO)
    handler = logging.FileHandler(tmp_path / "run.log")
    parent.addHandler(handler)
    try:
        run_loop(logging.getLogger("test_progress.hydra.progress"), FakeClock(), total=60, steps=60, step_s=1.0)
    finally:
        parent.removeHandler(handler)
        handler.close()
    lines = (tmp_path / "run.log").read_text().splitlines()
    assert len(lines) == 3 and lines[0].endswith("started") and lines[-1].endswith("done")
    assert capsys.readouterr() == ("", "")


class TtyStream(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_terminal_shows_a_labelled_bar_and_keeps_log_lines_off_it(tmp_path, capsys):
    terminal = io.StringIO()
    console = Console(file=terminal, force_terminal=True, width=140)
    logger = logging.getLogger("test_progress.tty")
    logger.propagate = False
    logger.setLevel(logging.INFO)
    tty_handler = logging.StreamHandler(TtyStream())
    file_handler = logging.FileHandler(tmp_path / "run.log")
    logger.addHandler(tty_handler)
    logger.addHandler(file_handler)
    try:
        run_loop(logger, FakeClock(), total=60, steps=60, step_s=1.0, console=console, unit="passages")
    finally:
        logger.removeHandler(tty_handler)
        logger.removeHandler(file_handler)
        file_handler.close()
    shown = terminal.getvalue()
    assert "embedding (test)" in shown and "elapsed" in shown and "ETA" in shown and "/s" in shown
    assert tty_handler.stream.getvalue() == ""  # nothing printed over the bar
    lines = (tmp_path / "run.log").read_text().splitlines()
    assert len(lines) == 3 and LINE_RE.match(lines[1]) and lines[-1].endswith("done")
    assert capsys.readouterr().out == ""


def test_format_duration():
    assert format_duration(0) == "0:00:00"
    assert format_duration(83.9) == "0:01:23"
    assert format_duration(3 * 3600 + 5) == "3:00:05"


@pytest.fixture(scope="module")
def minilm():
    emb = instantiate(OmegaConf.load(ROOT / "conf" / "embedder" / "minilm.yaml"))
    emb.ensure_loaded()  # transformers' own loading bar stays out of the captured stderr
    return emb


def test_real_embedding_reports_on_stderr_when_not_a_tty(minilm, capsys):
    texts = ["The Committee decided to maintain the target range for the federal funds rate.",
             "Inflation has eased over the past year but remains elevated.",
             "Job gains have moderated but remain strong."]
    with unconfigured("fedlab.progress"):
        vectors = minilm.embed_documents(texts, progress=True)
    assert vectors.shape == (3, minilm.dim)
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 2
    assert lines[0] == "embedding (minilm): 0/3 passages (0%) started"
    assert re.fullmatch(r"embedding \(minilm\): 3/3 passages \(100%\) [\d.,]+/s elapsed \d:\d\d:\d\d done", lines[-1])

    with unconfigured("fedlab.progress"):
        minilm.embed_documents(texts, progress=False)
    assert capsys.readouterr() == ("", "")


def test_pipeline_stages_say_what_they_build_on_a_miss_only(minilm, tmp_path, capsys):
    text = ("The Federal Open Market Committee decided to lower the target range for the federal funds rate. "
            * 30)
    docs = [Document(f"statement-2020-03-{d:02d}", "statement", f"2020-03-{d:02d}", None, "Statement", "u", text)
            for d in (3, 15)]
    corpus = Corpus(docs, "hash-for-test", tmp_path)
    chunker = instantiate_chunker(OmegaConf.load(ROOT / "conf" / "chunker" / "recursive.yaml"))
    cache = ArtifactCache(tmp_path / "cache")

    with unconfigured("fedlab.progress", "fedlab.pipeline"):
        chunks = chunk_corpus(corpus, chunker, minilm, cache, BuildInfo())
        info = BuildInfo()
        embed_chunks(chunks, minilm, cache, info, progress=True)
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.splitlines()
    n = f"{len(chunks):,}"
    assert lines[0] == "building chunks (recursive) of 2 documents — not in the cache yet"
    assert re.fullmatch(r"built chunks \(recursive\) of 2 documents in [\d.]+ s", lines[1])
    assert lines[2] == f"building embeddings (minilm) for {n} chunks — not in the cache yet"
    assert lines[3] == f"embedding (minilm): 0/{n} passages (0%) started"
    assert lines[4].startswith(f"embedding (minilm): {n}/{n} passages (100%)") and lines[4].endswith(" done")
    assert lines[5].startswith(f"built embeddings (minilm) for {n} chunks in ")
    assert info.cache == {"embeddings": "miss"}

    again = BuildInfo()
    with unconfigured("fedlab.progress", "fedlab.pipeline"):
        assert chunk_corpus(corpus, chunker, minilm, cache, again) == chunks
        embed_chunks(chunks, minilm, cache, again, progress=True)
    assert again.cache == {"chunks": "hit", "embeddings": "hit"}
    assert capsys.readouterr() == ("", "")  # cache hits stay quiet


# -- where a sweep is: "config i of N", and a heartbeat for steps without progress of their own --

def test_config_line_names_the_position_the_overrides_and_the_eta():
    from fedlab.progress import config_line

    assert config_line(1, 72, ["retriever=bm25", "chunker.size=128"], 5.0) == \
        "config 1 of 72: retriever=bm25 chunker.size=128 (sweep elapsed 0:00:05)"
    # 3 configs took 300 s: the 69 left (this one included) are estimated at 100 s each
    assert config_line(4, 72, ["retriever=dense"], 300.0).endswith("(sweep elapsed 0:05:00, ETA 1:55:00)")
    assert config_line(2, None, []) == "config 2"


def test_heartbeat_speaks_only_after_an_interval_of_silence(captured):
    from fedlab.progress import Heartbeat

    logger, handler = captured
    clock = FakeClock()
    last = {"t": 0.0}
    beat = Heartbeat("building chunks (recursive)", interval_s=30, clock=clock, last_line=lambda: last["t"],
                     logger=logger)
    beat._start = clock.now  # as __enter__ does, without starting the thread
    clock.now += 29
    assert not beat.tick() and handler.lines == []
    clock.now += 1
    assert beat.tick()
    assert handler.lines == ["building chunks (recursive): still running, elapsed 0:00:30"]
    last["t"] = clock.now  # that line (or any progress line) was just logged
    clock.now += 20
    assert not beat.tick()
    clock.now += 10
    assert beat.tick() and handler.lines[-1].endswith("elapsed 0:01:00")
    assert len(handler.lines) == 2


def test_heartbeat_thread_stops_with_the_step():
    from fedlab.progress import Heartbeat

    with Heartbeat("step", interval_s=3600) as beat:
        assert beat._thread.is_alive()
    assert not beat._thread.is_alive()
