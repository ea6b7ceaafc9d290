"""The code's layout: dependencies point one way, from the commands down to the corpus.

Every module under fedlab/ belongs to one layer of LAYERS; a module may import (at top level or
inside a function) only modules of its own layer or a lower one. A new package must be placed in
the table, so the direction is decided when the code is written, not discovered later.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "fedlab"

# lowest first; a name is a module or a package (and everything under it)
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("infrastructure", ("fedlab", "fedlab.errors", "fedlab.io", "fedlab.env", "fedlab.progress", "fedlab.memo", "fedlab.cache",
                        "fedlab.config", "fedlab.schema", "fedlab.cli", "fedlab.tracking", "fedlab.spans",
                        "fedlab.tracing")),
    ("corpus", ("fedlab.corpus",)),
    ("chunking, questions", ("fedlab.chunking", "fedlab.dataset")),
    ("embedding, index", ("fedlab.embedding", "fedlab.index")),
    ("facts", ("fedlab.facts",)),
    ("retrieval", ("fedlab.retrieval",)),
    ("question understanding", ("fedlab.query",)),
    ("pipeline", ("fedlab.pipeline",)),
    ("search server", ("fedlab.mcp",)),
    ("skills", ("fedlab.skills",)),
    ("answer backends", ("fedlab.lm",)),
    ("agent", ("fedlab.agent",)),
    ("evaluation", ("fedlab.evaluation",)),
    ("studies", ("fedlab.sweeps", "fedlab.benchmark")),
    ("commands", ("fedlab.evaluate", "fedlab.export", "fedlab.gate", "fedlab.ask", "fedlab.compare", "fedlab.report",
                  "fedlab.bench", "fedlab.ingest", "fedlab.calibrate", "fedlab.timeline", "fedlab.ablate",
                  "fedlab.fit_sentence_ranker", "fedlab.optimize",
                  "fedlab.dataset.__main__", "fedlab.mcp.__main__")),
]


def layer_of(module: str) -> int:
    """The layer of ``module``: the longest name in LAYERS that is the module or a package above it."""
    best, best_len = -1, -1
    for i, (_, names) in enumerate(LAYERS):
        for name in names:
            covers = module == name or (name != "fedlab" and module.startswith(name + "."))  # the root: itself only
            if covers and len(name) > best_len:
                best, best_len = i, len(name)
    return best


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported(path: Path, module: str) -> set[str]:
    """The fedlab modules ``path`` imports anywhere in its body (relative imports resolved)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.split(".")[0] == "fedlab"}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            if base.split(".")[0] != "fedlab":
                continue
            for alias in node.names:  # "from fedlab.x import y" may name the module fedlab.x.y
                candidate = f"{base}.{alias.name}"
                is_module = (PACKAGE.parent / Path(*candidate.split("."))).with_suffix(".py").exists() or \
                    (PACKAGE.parent / Path(*candidate.split(".")) / "__init__.py").exists()
                out.add(candidate if is_module else base)
    return out


MODULES = sorted((module_name(p), p) for p in PACKAGE.rglob("*.py"))


def test_every_module_has_a_layer():
    unplaced = [m for m, _ in MODULES if layer_of(m) < 0]
    assert not unplaced, f"place these modules in LAYERS of {Path(__file__).name}: {unplaced}"


def test_no_module_imports_upward():
    upward = []
    for module, path in MODULES:
        mine = layer_of(module)
        if mine < 0:  # reported by test_every_module_has_a_layer
            continue
        for target in sorted(imported(path, module)):
            theirs = layer_of(target)
            if theirs > mine:
                upward.append(f"{module} ({LAYERS[mine][0]}) imports {target} ({LAYERS[theirs][0]})")
    assert not upward, "imports that run upward:\n" + "\n".join(upward)


def test_no_import_cycle_between_modules():
    graph = {m: {t for t in imported(p, m) if t in dict(MODULES) and t != m} for m, p in MODULES}
    seen: dict[str, int] = {}  # 1 = on the stack, 2 = done
    cycles = []

    def visit(node: str, stack: list[str]) -> None:
        seen[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if seen.get(nxt) == 1:
                cycles.append(" -> ".join(stack[stack.index(nxt):] + [nxt]))
            elif nxt not in seen:
                visit(nxt, stack + [nxt])
        seen[node] = 2

    for m in sorted(graph):
        if m not in seen:
            visit(m, [m])
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


@pytest.mark.parametrize("module", ["fedlab.index.base", "fedlab.retrieval.two_pass", "fedlab.agent.program"])
def test_the_checker_sees_real_imports(module):
    """A guard on the guard: known modules do import fedlab modules, so an empty parse would fail here."""
    path = dict(MODULES)[module]
    assert imported(path, module)


def test_the_checker_sees_imports_inside_functions(tmp_path):
    src = tmp_path / "m.py"
    src.write_text("def f():\n    from fedlab.evaluation.answers import calibration\n")
    assert imported(src, "fedlab.m") == {"fedlab.evaluation.answers.calibration"}
