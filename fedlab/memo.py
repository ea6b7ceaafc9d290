"""What a process has already loaded, kept for the next config of a sweep.

A multirun evaluates its configs one after another in one process; most of them load the same
things — the corpus, the chunks, an index, the embedding model, the evidence spans of the
question set. ``remember(kind, key, make)`` returns the object made for ``(kind, key)`` earlier
in this process, or makes it now. Keys are content keys (the artifact cache's, or a hash of
everything the object is made from), so a remembered object is the one ``make`` would return.

Objects are shared, not copied: only read-only things belong here (loaded artifacts, a model).
Each kind keeps its ``MAX_PER_KIND`` most recently used objects; ``forget()`` drops everything
(tests, or a caller that wants a cold process).
"""
from __future__ import annotations

from collections import OrderedDict
from pathlib import Path
from typing import Callable, Hashable, Iterable, TypeVar

T = TypeVar("T")
MAX_PER_KIND = 8
_store: dict[str, OrderedDict[Hashable, object]] = {}
_MISSING = object()


def recall(kind: str, key: Hashable, default: object = None) -> object:
    """The object remembered for ``(kind, key)``, or ``default`` (nothing is made)."""
    shelf = _store.get(kind)
    if shelf is None or key not in shelf:
        return default
    shelf.move_to_end(key)
    return shelf[key]


def remember(kind: str, key: Hashable, make: Callable[[], T]) -> T:
    """The object remembered for ``(kind, key)``, or ``make()`` (remembered for next time)."""
    found = recall(kind, key, _MISSING)
    if found is not _MISSING:
        return found  # type: ignore[return-value]
    shelf = _store.setdefault(kind, OrderedDict())
    value = shelf[key] = make()
    while len(shelf) > MAX_PER_KIND:
        shelf.popitem(last=False)
    return value


def forget(kind: str | None = None) -> None:
    """Drop what is remembered (of ``kind``, or everything)."""
    if kind is None:
        _store.clear()
    else:
        _store.pop(kind, None)


def files_state(files: Iterable[Path]) -> tuple | None:
    """(path, size, mtime) of each file: what a remembered object stays valid under; None when
    one is missing."""
    state = []
    for f in files:
        try:
            st = f.stat()
        except OSError:
            return None
        state.append((str(f), st.st_size, st.st_mtime_ns))
    return tuple(state)
