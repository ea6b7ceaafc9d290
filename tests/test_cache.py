"""The content-addressed cache: reuse, damage detection, and concurrent builders."""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from fedlab.cache import ArtifactCache, content_key


def _write(tmp: Path, payload: str) -> None:
    (tmp / "data.txt").write_text(payload)


def test_hit_after_miss_and_keys_are_stable(tmp_path):
    cache = ArtifactCache(tmp_path)
    calls = []
    key = content_key("chunks", {"size": 256, "overlap": 32})
    assert key == content_key("chunks", {"overlap": 32, "size": 256})
    assert key != content_key("chunks", {"size": 256, "overlap": 33})
    d1 = cache.get_or_build("chunks", key, lambda tmp: (calls.append(1), _write(tmp, "x")))
    d2 = cache.get_or_build("chunks", key, lambda tmp: (calls.append(1), _write(tmp, "y")))
    assert d1 == d2 and (d2 / "data.txt").read_text() == "x"
    assert len(calls) == 1
    assert cache.stats["chunks.miss"] == 1 and cache.stats["chunks.hit"] == 1


def test_damaged_artifact_is_rebuilt(tmp_path):
    cache = ArtifactCache(tmp_path)
    d = cache.get_or_build("emb", "k", lambda tmp: _write(tmp, "good"))
    (d / "data.txt").write_text("bad!")
    d = cache.get_or_build("emb", "k", lambda tmp: _write(tmp, "good"))
    assert (d / "data.txt").read_text() == "good"
    assert cache.stats["emb.damaged"] == 1


def test_failed_build_leaves_nothing_behind(tmp_path):
    cache = ArtifactCache(tmp_path)

    def boom(tmp):
        _write(tmp, "partial")
        raise RuntimeError("killed mid-build")

    try:
        cache.get_or_build("idx", "k", boom)
    except RuntimeError:
        pass
    assert not (tmp_path / "idx" / "k").exists()
    assert [p.name for p in (tmp_path / "idx").iterdir() if not p.name.endswith(".lock")] == []


def test_two_processes_build_once(tmp_path):
    script = textwrap.dedent(
        f"""
        import sys, time
        from pathlib import Path
        from fedlab.cache import ArtifactCache
        log = Path({str(tmp_path / "builds.log")!r})
        def build(tmp):
            with open(log, "a") as fh:
                fh.write(sys.argv[1] + "\\n")
            time.sleep(1.0)
            (tmp / "v.txt").write_text("built by " + sys.argv[1])
        d = ArtifactCache({str(tmp_path / "cache")!r}).get_or_build("emb", "same-key", build)
        print((d / "v.txt").read_text())
        """
    )
    procs = [subprocess.Popen([sys.executable, "-c", script, str(i)], stdout=subprocess.PIPE, text=True) for i in range(2)]
    outs = [p.communicate(timeout=60)[0].strip() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert len((tmp_path / "builds.log").read_text().split()) == 1
    assert outs[0] == outs[1]


_SLOW_BUILDER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from fedlab.cache import ArtifactCache
    def build(tmp):
        (tmp / "partial.txt").write_text("half")
        print("building", flush=True)
        time.sleep(float(sys.argv[3]))
        (tmp / "v.txt").write_text("built by the other process")
    ArtifactCache(sys.argv[1]).get_or_build("embeddings", sys.argv[2], build)
    """
)


def _slow_builder(cache_dir: Path, key: str, seconds: float) -> subprocess.Popen:
    """Another process building (kind embeddings, ``key``) for ``seconds``; returns once it holds the lock."""
    proc = subprocess.Popen([sys.executable, "-c", _SLOW_BUILDER, str(cache_dir), key, str(seconds)],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "building"
    return proc


def test_a_wait_for_another_process_is_said_and_is_not_build_time(tmp_path, caplog):
    """A run waiting on another process's build lock said nothing for minutes, then logged the
    wait as its own build of a hit (build_s.embeddings=141): now it says it waits, and the wait is
    wait_s, not build_s."""
    import logging

    from fedlab.pipeline import BuildInfo, _timed

    other = _slow_builder(tmp_path, "shared-key", 3.0)
    info = BuildInfo()
    cache = ArtifactCache(tmp_path)
    with caplog.at_level(logging.INFO, logger="fedlab.cache"):
        path = _timed(info, "embeddings", cache, "embeddings", "shared-key", lambda tmp: pytest.fail("built twice"),
                      "embeddings of 3,080 chunks")
    assert other.wait(timeout=60) == 0
    assert (path / "v.txt").read_text() == "built by the other process"
    assert info.cache["embeddings"] == "hit" and cache.stats["embeddings.hit"] == 1
    assert info.waited["embeddings"] >= 1.5 and info.seconds["embeddings"] < 1.0
    said = [r.getMessage() for r in caplog.records]
    assert any(m.startswith("waiting for another process to finish building embeddings of 3,080 chunks") for m in said)


def test_a_build_killed_mid_way_leaves_no_temporary_directory_after_the_next_build(tmp_path):
    """kill -9 during a build leaves its temporary directory (.KEY.xxxx) in the cache: the next build
    there removes it, and any other key's whose lock no process holds — not one being built now."""
    import signal

    builders = [_slow_builder(tmp_path, key, 60.0) for key in ("killed-key", "other-killed-key")]
    for proc in builders:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    directory = tmp_path / "embeddings"
    assert {p.name.split(".")[1] for p in directory.glob(".*.*") if p.is_dir()} == {"killed-key", "other-killed-key"}
    busy = _slow_builder(tmp_path, "busy-key", 5.0)
    try:
        cache = ArtifactCache(tmp_path)
        built = cache.get_or_build("embeddings", "killed-key", lambda tmp: _write(tmp, "rebuilt"))
        assert (built / "data.txt").read_text() == "rebuilt" and not (built / "partial.txt").exists()
        left = {p.name.split(".")[1] for p in directory.glob(".*.*") if p.is_dir()}
        assert left == {"busy-key"}  # the build under way keeps its directory
    finally:
        assert busy.wait(timeout=60) == 0
    assert not [p for p in directory.glob(".*.*") if p.is_dir()]


def test_query_vectors_cached_per_text_and_embedder(tmp_path):
    cache = ArtifactCache(tmp_path)
    seen = []

    def embed(text):
        seen.append(text)
        return np.arange(4, dtype=np.float32) + len(text)

    a, hit_a = cache.query_vector("fp1", "rates in 2022?", embed)
    b, hit_b = cache.query_vector("fp1", "rates in 2022?", embed)
    c, _ = cache.query_vector("fp2", "rates in 2022?", embed)
    assert np.array_equal(a, b) and np.array_equal(a, c)
    assert (hit_a, hit_b) == (False, True)
    assert seen == ["rates in 2022?", "rates in 2022?"]
    assert cache.stats["query_embeddings.hit"] == 1


@pytest.mark.parametrize("damage", [b"", b"PK\x03\x04" + b"\x00" * 96, b"not numpy at all"])
def test_damaged_query_vector_is_recomputed(tmp_path, damage):
    """`truncate -s 0` / `-s 100` of a cached query vector: recomputed, never EOFError/BadZipFile."""
    cache = ArtifactCache(tmp_path)
    embed = lambda text: np.ones(4, dtype=np.float32)  # noqa: E731
    first, _ = cache.query_vector("fp", "q", embed)
    (path,) = (tmp_path / "query_embeddings").rglob("*.npz")
    path.write_bytes(damage)
    again, hit = cache.query_vector("fp", "q", embed)
    assert not hit and np.array_equal(first, again)
    assert cache.stats["query_embeddings.damaged"] == 1
    assert cache.query_vector("fp", "q", embed)[1]  # the replacement is a good file


def test_content_key_accepts_undecodable_text():
    """argv with invalid UTF-8 arrives as surrogate escapes; hashing it must not raise."""
    bad = b"rates \xff in 2022".decode("utf-8", "surrogateescape")
    assert content_key("q", bad) != content_key("q", "rates  in 2022")


@pytest.mark.parametrize("kind", ["bm25", "index"])
def test_an_index_is_rebuilt_when_only_its_passages_dates_change(tmp_path, kind):
    """An index stores each passage's meeting date and type for its filters: passages re-dated with
    the same text (fedlab.corpus.recorded) must not be filtered by the dates they had."""
    from fedlab.chunking.chunk import Chunk
    from fedlab.index.bm25 import BM25Index
    from fedlab.index.exact import ExactIndex
    from fedlab.index.filter import MetadataFilter
    from fedlab.pipeline import BuildInfo, build_bm25, build_vector_index

    texts = ["the committee lowered the target range", "participants supported a reduction of 50 basis points"]
    chunks = [Chunk(f"c{i}", "minutes-2020-03-15", "minutes", "2020-03-15", None, 0, len(t), t, t)
              for i, t in enumerate(texts)]
    redated = [chunks[0], Chunk(**{**vars(chunks[1]), "meeting_date": "2020-03-03"})]
    cache, vectors = ArtifactCache(tmp_path), np.eye(2, 8, dtype=np.float32)
    on_march_3 = MetadataFilter(date_from="2020-03-03", date_to="2020-03-03")

    def build(passages):
        info = BuildInfo(keys={"embeddings": "same-vectors"})
        if kind == "bm25":
            return build_bm25(BM25Index(), passages, cache, info).search("reduction basis points", 2, on_march_3)
        return build_vector_index(ExactIndex(), vectors, passages, cache, info).search(vectors[1], 2, on_march_3)

    assert [i for i, _ in build(chunks)] == []
    assert [i for i, _ in build(redated)] == [1]
    assert cache.stats[f"{kind}.miss"] == 2
