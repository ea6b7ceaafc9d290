"""Real servers on loopback for the tests: an MLflow tracking server, a Ray cluster."""
from __future__ import annotations

import contextlib
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from clirun import cli_env


# The test cluster's token, in the environment of the nodes and of the clients (never in ~/.ray).
RAY_CLIENT_ENV = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, proc: subprocess.Popen, timeout_s: float = 120) -> None:
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError(f"server exited before listening: {proc.stderr.read()[-2000:] if proc.stderr else ''}")
            time.sleep(0.5)
    raise TimeoutError(f"nothing listening on 127.0.0.1:{port} after {timeout_s:.0f}s")


@contextlib.contextmanager
def mlflow_server(workdir: Path):
    """A real `mlflow server` on 127.0.0.1 with a sqlite store under ``workdir``; yields its URI."""
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "mlflow", "server", "--host", "127.0.0.1", "--port", str(port),
         "--backend-store-uri", f"sqlite:///{workdir / 'server.db'}", "--artifacts-destination",
         str(workdir / "artifacts"), "--workers", "1"],
        env=cli_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    try:
        wait_for_port(port, server)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(timeout=30)


def _ray(*args: str, env: dict) -> subprocess.CompletedProcess:
    ray = Path(sys.executable).with_name("ray")
    return subprocess.run([str(ray), *args], env=env, capture_output=True, text=True, timeout=180)


@contextlib.contextmanager
def ray_cluster(workers: int = 2):
    """A real Ray cluster on 127.0.0.1: a head node and ``workers - 1`` more nodes, one CPU each,
    started with the `ray` CLI as an operator would, with token authentication; yields its address. Clients need ``RAY_CLIENT_ENV`` besides RAY_ADDRESS."""
    temp_dir = tempfile.mkdtemp(prefix="ray", dir="/tmp")  # Ray's socket paths must stay short
    env = cli_env(RAY_CLIENT_ENV)
    port = free_port()
    address = f"127.0.0.1:{port}"
    try:
        head = _ray("start", "--head", "--node-ip-address=127.0.0.1", f"--port={port}", "--num-cpus=1",
                    "--include-dashboard=false", "--disable-usage-stats", f"--temp-dir={temp_dir}", env=env)
        if head.returncode != 0:
            raise RuntimeError(f"ray start --head failed: {head.stderr[-2000:]}")
        for _ in range(workers - 1):
            # on a loaded machine the head can miss the joining node's first deadline
            # ("Failed to get node info … Deadline Exceeded"): an operator starts it again
            for _attempt in range(2):
                node = _ray("start", f"--address={address}", "--node-ip-address=127.0.0.1", "--num-cpus=1", env=env)
                if node.returncode == 0:
                    break
                time.sleep(5)
            if node.returncode != 0:
                raise RuntimeError(f"ray start --address failed: {node.stderr[-2000:]}")
        yield address
    finally:
        _ray("stop", "--force", env=env)
        shutil.rmtree(temp_dir, ignore_errors=True)


def alive_ray_nodes(address: str) -> int:
    """How many nodes the cluster at ``address`` reports alive (asked from a separate process)."""
    code = ("import ray; ray.init(address=%r, include_dashboard=False, logging_level='ERROR'); "
            "print(sum(1 for n in ray.nodes() if n['Alive']))" % address)
    proc = subprocess.run([sys.executable, "-c", code], env=cli_env(RAY_CLIENT_ENV),
                          capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-2000:])
    return int(proc.stdout.strip().splitlines()[-1])


__all__ = ["alive_ray_nodes", "free_port", "mlflow_server", "ray_cluster", "wait_for_port"]
