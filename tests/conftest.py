"""Shared fixtures: offline guard, the saved site, a loopback server."""
from __future__ import annotations

import ipaddress
import os
import socket
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
import fedlab  # noqa: E402,F401  (telemetry switches)

ROOT = Path(__file__).resolve().parent.parent


def _mirror_dir() -> Path | None:
    env = os.environ.get("FEDLAB_MIRROR")
    candidates = [Path(env)] if env else []
    candidates.append(ROOT.parent / "shared" / "fomc-mirror")
    for c in candidates:
        if (c / "www.federalreserve.gov" / "monetarypolicy").is_dir():
            return c.resolve()
    return None


MIRROR = _mirror_dir()
SITE = MIRROR / "www.federalreserve.gov" if MIRROR else None


def _is_loopback(address) -> bool:
    if isinstance(address, tuple):
        host = address[0]
    else:
        return True  # AF_UNIX paths
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _guarded_connect(self, address):
    if self.family in (socket.AF_INET, socket.AF_INET6) and not _is_loopback(address):
        raise OSError(f"test network guard: connection to non-loopback address {address!r} refused")
    return _real_connect(self, address)


def _guarded_connect_ex(self, address):
    if self.family in (socket.AF_INET, socket.AF_INET6) and not _is_loopback(address):
        raise OSError(f"test network guard: connection to non-loopback address {address!r} refused")
    return _real_connect_ex(self, address)


@pytest.fixture(autouse=True, scope="session")
def network_guard():
    """Fail any connection to a non-loopback address: tests run offline."""
    socket.socket.connect = _guarded_connect
    socket.socket.connect_ex = _guarded_connect_ex
    yield
    socket.socket.connect = _real_connect
    socket.socket.connect_ex = _real_connect_ex


@pytest.fixture(scope="session")
def mirror_dir() -> Path:
    if MIRROR is None:
        pytest.skip("../shared/fomc-mirror (the saved federalreserve.gov pages) is not present")
    return MIRROR


@pytest.fixture(scope="session")
def site_dir(mirror_dir) -> Path:
    return mirror_dir / "www.federalreserve.gov"


@pytest.fixture(scope="session")
def corpus_dir(tmp_path_factory, mirror_dir) -> Path:
    """The full corpus snapshot built once per session from the saved site."""
    from fedlab.corpus.ingest import run_ingest
    from rich.console import Console

    data = tmp_path_factory.mktemp("data")
    out = data / "corpus" / "fomc"
    run_ingest(
        name="fomc", base_url="https://www.federalreserve.gov", out_dir=out, raw_cache_dir=data / "raw",
        years=range(2019, 2026), mirror=str(mirror_dir), console=Console(file=open(os.devnull, "w")),
    )
    return out


@pytest.fixture(scope="session")
def documents(corpus_dir):
    from fedlab.corpus.snapshot import load_documents

    return load_documents(corpus_dir)
