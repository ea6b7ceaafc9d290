"""Content-addressed artifacts (chunks, embeddings, indexes, query vectors) under one root.

An artifact is a directory named by the hash of everything that determines it. It is built
in a temporary directory and renamed into place, with a ``_manifest.json`` listing the
sha256 of every file; a directory whose files no longer match is rebuilt, not trusted.
A file lock per key makes concurrent processes (a parallel sweep) build each artifact once:
the second waits — and says so, with the heartbeat of fedlab.progress while the wait lasts — then
reuses the first one's result; the seconds it waited are kept apart (``waited``), not counted as
its own build. A temporary directory left by a build that never finished (its process killed with
-9) is removed by the next build in that directory, once no process holds its key's lock.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
import time
from collections import Counter, OrderedDict
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np
from filelock import FileLock, Timeout

from fedlab import io, memo

log = logging.getLogger(__name__)
MANIFEST = "_manifest.json"


def content_key(*parts: Any) -> str:
    """A stable hash of JSON-able parts (strings, numbers, lists, dicts)."""
    # surrogatepass: text that is not valid Unicode (undecodable bytes in argv) still hashes
    blob = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str).encode("utf-8", "surrogatepass")
    return hashlib.sha256(blob).hexdigest()[:24]


def texts_key(texts: list[str]) -> str:
    h = hashlib.sha256()
    for t in texts:
        h.update(hashlib.sha256(t.encode("utf-8", "surrogatepass")).digest())
    return h.hexdigest()[:24]


def _file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _manifest_for(directory: Path) -> dict[str, str]:
    return {
        p.relative_to(directory).as_posix(): _file_digest(p)
        for p in sorted(directory.rglob("*"))
        if p.is_file() and p.name != MANIFEST
    }


class ArtifactCache:
    def __init__(self, root: str | Path, verify: bool = True):
        self.root = Path(root)
        self.verify = verify
        self.stats: Counter[str] = Counter()  # "<kind>.hit" / "<kind>.miss" / "<kind>.damaged"
        self.waited: Counter[str] = Counter()  # kind -> seconds spent waiting for another process's build

    def path(self, kind: str, key: str) -> Path:
        return self.root / kind / key

    def _valid(self, directory: Path) -> bool:
        manifest_path = directory / MANIFEST
        if not manifest_path.is_file():
            return False
        if not self.verify:
            return True
        try:
            recorded = json.loads(manifest_path.read_text())
        except ValueError:
            return False
        return recorded == _manifest_for(directory)

    def get_or_build(self, kind: str, key: str, build: Callable[[Path], None], what: str | None = None) -> Path:
        """The artifact directory for (kind, key); ``build(tmp_dir)`` fills it on a miss. ``what``
        names the artifact in the line said while waiting for another process's build."""
        final = self.path(kind, key)
        if self._valid(final):
            self.stats[f"{kind}.hit"] += 1
            return final
        final.parent.mkdir(parents=True, exist_ok=True)
        with self._locked(final, kind, what or f"{kind} {key}"):
            if self._valid(final):  # another process built it while we waited
                self.stats[f"{kind}.hit"] += 1
                return final
            if final.exists():
                log.warning("cache artifact %s/%s is damaged; rebuilding it", kind, key)
                self.stats[f"{kind}.damaged"] += 1
                shutil.rmtree(final)
            clear_unfinished(final.parent, key)
            tmp = Path(tempfile.mkdtemp(prefix=f".{key}.", dir=final.parent))
            try:
                build(tmp)
                io.write_json(tmp / MANIFEST, _manifest_for(tmp))
                os.replace(tmp, final)
            finally:
                if tmp.exists():
                    shutil.rmtree(tmp, ignore_errors=True)
        self.stats[f"{kind}.miss"] += 1
        return final

    @contextmanager
    def _locked(self, final: Path, kind: str, what: str) -> Iterator[None]:
        """The key's lock; when another process holds it (building the artifact), the wait is said
        at once and while it lasts, and its seconds added to ``waited[kind]``."""
        from fedlab.progress import format_duration, heartbeat, note

        lock = FileLock(str(final) + ".lock")
        try:
            lock.acquire(timeout=0)
        except Timeout:
            note(log, f"waiting for another process to finish building {what} (lock {final.name}.lock)")
            t0 = time.perf_counter()
            with heartbeat(f"waiting for another process building {what}"):
                lock.acquire()
            waited = time.perf_counter() - t0
            self.waited[kind] += waited
            note(log, f"waited {format_duration(waited) if waited >= 60 else f'{waited:.1f} s'} for {what}")
        try:
            yield
        finally:
            lock.release()

    # -- query vectors: many tiny artifacts, one .npz each ----------------------------------
    def query_vector_path(self, embedder_fp: str, text: str) -> Path:
        key = content_key(embedder_fp, text)
        return self.root / "query_embeddings" / key[:2] / f"{key}.npz"

    def query_vector(self, embedder_fp: str, text: str, embed: Callable[[str], np.ndarray]) -> tuple[np.ndarray, bool]:
        """The query's vector and whether it came from the cache. Any file that cannot be read
        back as a vector (truncated, empty, not numpy) is damaged: it is recomputed and replaced.
        Timing is the caller's business: a cached vector carries no latency."""
        path = self.query_vector_path(embedder_fp, text)
        state = memo.files_state([path])
        known = _QUERY_VECTORS.get((path, state)) if state is not None else None
        if known is not None:  # read earlier in this process, and the file is unchanged
            _QUERY_VECTORS.move_to_end((path, state))
            self.stats["query_embeddings.hit"] += 1
            return known, True
        if state is not None:
            try:
                with np.load(path, allow_pickle=False) as data:
                    vec = np.asarray(data["vector"], dtype=np.float32)
                if vec.ndim == 1 and vec.size and np.isfinite(vec).all():
                    self.stats["query_embeddings.hit"] += 1
                    return _remembered(path, state, vec), True
            except Exception:  # noqa: BLE001 — EOFError, BadZipFile, ValueError, OSError, KeyError, ...
                pass
            log.warning("cached query vector %s is damaged; recomputing it", path.name)
            self.stats["query_embeddings.damaged"] += 1
        vec = np.asarray(embed(text), dtype=np.float32)
        with io.atomic_path(path) as tmp:
            with open(tmp, "wb") as fh:
                np.savez(fh, vector=vec)
        self.stats["query_embeddings.miss"] += 1
        return _remembered(path, memo.files_state([path]), vec), False


def clear_unfinished(directory: Path, key: str) -> None:
    """Remove the temporary directories of builds in ``directory`` that never finished (``.KEY.xxxx``,
    left by a process killed mid-build): ``key``'s, whose lock the caller holds, and any other key's
    whose lock no process holds now."""
    removed = 0
    for tmp in directory.glob(".*.*"):
        owner = tmp.name[1:].split(".", 1)[0]
        if not tmp.is_dir() or not owner:
            continue
        if owner == key:
            shutil.rmtree(tmp, ignore_errors=True)
            removed += 1
            continue
        lock = FileLock(str(directory / f"{owner}.lock"))
        try:
            lock.acquire(timeout=0)
        except Timeout:
            continue  # being built now
        try:
            shutil.rmtree(tmp, ignore_errors=True)
            removed += 1
        finally:
            lock.release()
    if removed:
        log.info("removed %d temporary directories of unfinished builds from %s", removed, directory)


# Query vectors read or written in this process, by cache file and its (size, mtime): the configs of
# a sweep embed the same questions. Read-only, so no caller can change a shared one.
_QUERY_VECTORS: OrderedDict[tuple[Path, tuple], np.ndarray] = OrderedDict()
MAX_QUERY_VECTORS = 20_000


def _remembered(path: Path, state: tuple | None, vec: np.ndarray) -> np.ndarray:
    vec.setflags(write=False)
    if state is None:
        return vec
    _QUERY_VECTORS[(path, state)] = vec
    while len(_QUERY_VECTORS) > MAX_QUERY_VECTORS:
        _QUERY_VECTORS.popitem(last=False)
    return vec
