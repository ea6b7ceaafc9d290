"""A bad `--config` file is one line naming the file and the problem, in ask and in the MCP server.

The CLIs run as a user runs them (subprocesses); the config is refused before any corpus is read,
so these tests need no corpus.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fedlab.config import compose
from fedlab.errors import FedlabError

ROOT = Path(__file__).resolve().parent.parent

BAD_FILES = {
    # name: (content, what the message says besides the file's path)
    "malformed.yaml": (b"defaults:\n  - paths: default\n foo: [1,\n",
                       "is not valid YAML (expected <block end>, but found '<block mapping start>', line 3 column 2)"),
    "latin1.yaml": ("retriever:\n  kind: bm25  # r\xe9sum\xe9\n".encode("latin-1"),
                    "is not UTF-8 text (byte 0xe9 at offset 28): save it as UTF-8"),
    "string.yaml": (b"hello\n", "holds a str ('hello') at the top level, not a mapping of config keys"),
    "list.yaml": (b"- paths: default\n", "holds a list"),
    "empty.yaml": (b"", "holds nothing at the top level"),
    "duplicate.yaml": (b"defaults:\n  - evaluate\n  - _self_\nobjective: a\nobjective: b\n",
                       "is not valid YAML (found duplicate key objective, line 5 column 1)"),
    "defaults_int.yaml": (b"defaults: 5\n", "has a defaults entry that is not a list"),
    "no_pipeline.yaml": (b"objective: recall@5\n", "has no paths, corpus, chunker, embedder, retriever, reranker"),
}


@pytest.fixture(scope="module")
def bad_configs(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("configs")
    paths = {}
    for name, (content, _) in BAD_FILES.items():
        paths[name] = d / name
        paths[name].write_bytes(content)
    paths["missing.yaml"] = d / "missing.yaml"
    return paths


def run(module: str, *args: str, timeout: int = 120) -> subprocess.CompletedProcess:
    env = {**os.environ, "FEDLAB_DATA_DIR": "/nonexistent-fedlab-data"}  # never reached
    return subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True, env=env, cwd=ROOT,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def one_error_line(proc) -> str:
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip() and " INFO " not in line]
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert " at at " not in lines[0]
    return lines[0]


def expected(name: str, path: Path) -> str:
    if name == "missing.yaml":
        return f"config file {path} does not exist"
    if name == "no_pipeline.yaml":
        return f"config '{path}' {BAD_FILES[name][1]}"
    return f"config file {path} {BAD_FILES[name][1]}"


@pytest.mark.parametrize("name", [*BAD_FILES, "missing.yaml"])
def test_compose_names_the_file_and_the_problem(bad_configs, name):
    from fedlab.config import PIPELINE_GROUPS, require_keys

    path = bad_configs[name]
    with pytest.raises(FedlabError) as err:
        require_keys(compose(str(path)), PIPELINE_GROUPS, str(path))
    message = str(err.value)
    assert "\n" not in message and " at at " not in message
    assert message.startswith(expected(name, path)), message


@pytest.mark.parametrize("name", ["malformed.yaml", "latin1.yaml", "string.yaml", "missing.yaml", "no_pipeline.yaml"])
def test_ask_with_a_bad_config_file(bad_configs, name):
    path = bad_configs[name]
    proc = run("fedlab.ask", "--json", "--config", str(path), "What did the FOMC decide in March 2020?")
    line = one_error_line(proc)
    assert line.startswith("error: " + expected(name, path)), line
    assert json.loads(proc.stdout) == {"error": line.removeprefix("error: "), "exit_code": 2}


@pytest.mark.parametrize("name", ["malformed.yaml", "latin1.yaml", "string.yaml", "missing.yaml", "duplicate.yaml"])
def test_mcp_server_with_a_bad_config_file(bad_configs, name):
    path = bad_configs[name]
    proc = run("fedlab.mcp", "--config", str(path))
    line = one_error_line(proc)
    assert line.startswith("error: " + expected(name, path)), line
    assert proc.stdout == ""  # the protocol channel stays clean


def test_mcp_usage_mistake_is_one_line():
    line = one_error_line(run("fedlab.mcp", "--max-top-k", "0"))
    assert "--max-top-k and --max-query-chars must be positive" in line


# -- settings by their schema, and code no config of fedlab's names --------------------------------

BAD_SETTINGS = [
    (["retriever=hybrid", "retriever.rrf_k=-60"], "retriever.rrf_k=-60 is out of range: use a number greater than 0"),
    (["retriever=hybrid", "retriever.candidates=lots"],
     "retriever.candidates='lots' is not a whole number: use a whole number of at least 1"),
    (["agent.answerability.threshold=high"],
     "agent.answerability.threshold='high' is not a number: use a number from 0 to 1, or null"),
    (["retriever.top_k=2.5"], "retriever.top_k=2.5 is not a whole number: use a whole number from 1 to 1000"),
    (["bm25.b=1.5"], "bm25.b=1.5 is out of range: use a number from 0 to 1"),
    (["retriever.date_aware=maybe"], "retriever.date_aware='maybe' is not true or false: use true or false"),
    (["reranker._target_=os.system"], "config 'evaluate' sets reranker._target_='os.system', which is not one of "
                                      "fedlab's own: name one of conf/reranker/"),
    (["+retriever.adaptive_top_k._target_=builtins.eval"],
     "sets retriever.adaptive_top_k._target_='builtins.eval', which is not one of fedlab's own"),
]


@pytest.mark.parametrize("sets,message", BAD_SETTINGS, ids=[s[-1] for s, _ in BAD_SETTINGS])
def test_ask_refuses_a_setting_out_of_its_schema_in_one_line_and_json(sets, message):
    """`--set retriever.candidates=lots` was a traceback with no JSON; `threshold=high` a line with no
    reason; a `_target_` Hydra blocks (os.system) a traceback. Refused before anything is built."""
    args = [a for s in sets for a in ("--set", s)]
    proc = run("fedlab.ask", "--json", "--config", "evaluate", *args, "What did the FOMC decide in March 2020?")
    line = one_error_line(proc)
    assert message in line, line
    assert json.loads(proc.stdout) == {"error": line.removeprefix("error: "), "exit_code": 2}


def test_every_config_in_conf_fits_the_schema():
    from fedlab.schema import check_schema

    for name in ("evaluate", "production"):
        check_schema(compose(name, []))
    for group in ("chunker", "embedder", "index", "reranker", "retriever", "lm"):
        for path in sorted((ROOT / "conf" / group).glob("*.yaml")):
            check_schema(compose("evaluate", [f"{group}={path.stem}", *(["agent=default"] if group == "lm" else [])]))


def test_a_constructor_failure_is_one_line():
    from fedlab.config import instantiate_group

    cfg = compose("evaluate", ["+reranker.bogus=1"])
    with pytest.raises(FedlabError) as err:
        instantiate_group(cfg.reranker, "reranker")
    message = str(err.value)
    assert message == ("reranker cannot be built from its config (NoReranker() takes no arguments): check the "
                       "reranker settings and its _target_")
