"""Atomic file writes: a reader sees the old file or the new one, never half of one."""
from __future__ import annotations

import json
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator

_UMASK = os.umask(0)
os.umask(_UMASK)


@contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it into place on success."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    os.chmod(tmp_path, 0o666 & ~_UMASK)
    try:
        yield tmp_path
        os.replace(tmp_path, target)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


def replace_together(pairs: Iterable[tuple[str | os.PathLike, str | os.PathLike]]) -> None:
    """Rename each (new file, target) into place, in order, with SIGINT and SIGTERM held until the
    last is done: files that belong together (a config and the model fitted for it) are replaced
    as a pair, not one of them by a Ctrl-C between the two renames. Each new file must be in its
    target's directory (a rename within one filesystem)."""
    import signal

    held = {signal.SIGINT, signal.SIGTERM}
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        for new, target in pairs:
            os.replace(new, target)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def write_bytes(path: str | os.PathLike, data: bytes) -> None:
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())


def write_text(path: str | os.PathLike, text: str) -> None:
    write_bytes(path, text.encode("utf-8"))


def write_json(path: str | os.PathLike, obj: Any) -> None:
    write_text(path, json.dumps(obj, indent=2, ensure_ascii=False, sort_keys=True) + "\n")


def jsonl_bytes(rows: Iterable[dict], sort_keys: bool = True) -> bytes:
    """One JSON object a line, UTF-8; ``sort_keys=False`` keeps each row's own key order (id first)."""
    return "".join(json.dumps(row, ensure_ascii=False, sort_keys=sort_keys) + "\n" for row in rows).encode("utf-8")


def write_jsonl(path: str | os.PathLike, rows: Iterable[dict], sort_keys: bool = True) -> None:
    write_bytes(path, jsonl_bytes(rows, sort_keys))


def read_jsonl(path: str | os.PathLike) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]
