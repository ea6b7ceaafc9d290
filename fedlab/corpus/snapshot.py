"""The corpus as stored (docs.jsonl + manifest.json): loaded, hash-checked, and its content hash.

``fedlab.corpus.build`` writes a snapshot; everything else reads one through ``load_corpus``.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from fedlab.corpus.document import Document
from fedlab.errors import FedlabError


def content_hash(docs: list[Document]) -> str:
    h = hashlib.sha256()
    for d in docs:
        h.update(json.dumps(d.to_json(), sort_keys=True, ensure_ascii=False).encode())
        h.update(b"\n")
    return h.hexdigest()[:16]


REBUILD = "rebuild it with `make data` (FEDLAB_MIRROR=../shared/fomc-mirror make data reads the saved site)"


@dataclass(frozen=True)
class Corpus:
    """The corpus as loaded: its documents, the content hash computed from them, its manifest
    and where it lives."""

    documents: list[Document]
    content_hash: str
    directory: Path
    manifest: dict = field(default_factory=dict)

    @property
    def by_id(self) -> dict[str, Document]:
        return {d.doc_id: d for d in self.documents}


def load_documents(corpus_dir: str | Path) -> list[Document]:
    """The documents of docs.jsonl; FedlabError (one line) on a line that is not a document."""
    path = Path(corpus_dir) / "docs.jsonl"
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise FedlabError(f"cannot read {path} ({exc.strerror or exc}): {REBUILD}") from None
    docs = []
    for lineno, raw in enumerate(data.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            docs.append(Document.from_json(json.loads(raw.decode("utf-8"))))
        except UnicodeDecodeError:
            raise FedlabError(f"{path}:{lineno}: not UTF-8 text: {REBUILD}") from None
        except json.JSONDecodeError as exc:
            raise FedlabError(f"{path}:{lineno}: not valid JSON ({exc.msg}): {REBUILD}") from None
        except (TypeError, ValueError, AttributeError) as exc:
            raise FedlabError(f"{path}:{lineno}: not a document ({exc}): {REBUILD}") from None
    return docs


def load_manifest(corpus_dir: str | Path) -> dict:
    path = Path(corpus_dir) / "manifest.json"
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise FedlabError(f"cannot read {path} ({exc.strerror or exc}): {REBUILD}") from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
        raise FedlabError(f"{path} is not valid JSON ({exc}): {REBUILD}") from None
    if not isinstance(manifest, dict):
        raise FedlabError(f"{path} is not a corpus manifest (expected a JSON object): {REBUILD}")
    return manifest


def load_corpus(corpus_dir: str | Path) -> Corpus:
    """The corpus at ``corpus_dir``, checked: the content hash is computed from the documents
    themselves and must equal manifest.json's, else FedlabError (one line). Every consumer
    keys its caches and logs by this hash, so an edited or half-written docs.jsonl must not
    pass under the manifest's old version."""
    directory = Path(corpus_dir)
    if not (directory / "docs.jsonl").is_file() or not (directory / "manifest.json").is_file():
        raise FedlabError(
            f"no corpus at {directory} (docs.jsonl + manifest.json): run `make data` to build it "
            "(FEDLAB_MIRROR=../shared/fomc-mirror make data reads the saved site)"
        )
    manifest = load_manifest(directory)
    documents = load_documents(directory)
    actual = content_hash(documents)
    recorded = manifest.get("content_hash")
    if actual != recorded:
        raise FedlabError(
            f"corpus at {directory}: docs.jsonl does not match manifest.json (documents hash {actual}, "
            f"manifest says {recorded}): {REBUILD}"
        )
    return Corpus(documents, actual, directory, manifest)
