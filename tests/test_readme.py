"""The README and docs/ stay true: every command and `make` target the README names exists, every
relative link in README.md and docs/ points at a file (and a heading) that exists, the README stays
short, and the results box is rewritten only between its markers (``python -m fedlab.report --readme``)."""
from __future__ import annotations

import ast
import importlib
import importlib.util
import json
import re
from pathlib import Path

import pytest
from clirun import run_python

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PAGES = sorted([README, ROOT / "CHANGELOG.md", *(ROOT / "docs").rglob("*.md"), ROOT / "datasets/fomc_qa/README.md"])
MAX_README_LINES = 300


def _code(text: str) -> str:
    """The text of every code span and fenced block: where commands are written."""
    fenced = [body for lang, body in re.findall(r"```([^\n]*)\n(.*?)```", text, flags=re.S)
              if lang.strip() in ("", "bash", "sh", "shell", "console")]  # not ```text (prose kept verbatim)
    spans = re.findall(r"`([^`\n]+)`", re.sub(r"```.*?```", "", text, flags=re.S))
    return "\n".join(fenced + spans)


def _modules(text: str) -> list[str]:
    return sorted(set(re.findall(r"python -m (fedlab(?:\.\w+)+)", _code(text))))


def _make_targets(text: str) -> list[str]:
    return sorted(set(re.findall(r"(?<![\w-])make ([a-z][\w-]*)", _code(text))))


def _makefile_targets() -> set[str]:
    return set(re.findall(r"^([a-z][\w-]*):", (ROOT / "Makefile").read_text(encoding="utf-8"), flags=re.M))


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[`*]|\[([^\]]*)\]\([^)]*\)", lambda m: m.group(1) or "", heading.strip()).lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    return {_slug(h) for h in re.findall(r"^#{1,6} (.+)$", text, flags=re.M)}


def _links(page: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    text = re.sub(r"`[^`\n]*`", "", text)
    return re.findall(r"\]\(([^)\s]+)\)", text)


def _main_source(module: str) -> tuple[Path, str]:
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin, f"{module} is not a module of this checkout"
    path = Path(spec.origin)
    if spec.submodule_search_locations:  # a package runs its __main__.py
        path = path.parent / "__main__.py"
        assert path.exists(), f"python -m {module}: the package has no __main__.py"
    return path, path.read_text(encoding="utf-8")


def test_the_readme_is_short():
    n = len(README.read_text(encoding="utf-8").splitlines())
    assert n <= MAX_README_LINES, f"README.md has {n} lines (at most {MAX_README_LINES}): move detail to a docs/ page"


def test_the_extraction_finds_commands_targets_and_links():
    text = "run `python -m fedlab.ask \"q\"` or\n```bash\nmake sweep STUDY=x\n```\nsee [a](docs/a.md#b) `[no](x.md)`"
    assert _modules(text) == ["fedlab.ask"]
    assert _make_targets(text) == ["sweep"]
    assert _slug("Is a `difference` real?") == "is-a-difference-real"
    assert _slug("Design notes: `fedlab/agent/answerability_fit.py`") == "design-notes-fedlabagentanswerability_fitpy"


@pytest.mark.parametrize("module", _modules(README.read_text(encoding="utf-8")))
def test_every_python_command_in_the_readme_runs_a_main(module):
    path, source = _main_source(module)
    tree = ast.parse(source)
    has_main = any(isinstance(n, ast.FunctionDef) and n.name == "main" for n in tree.body)
    guarded = any(isinstance(n, ast.If) and "__main__" in ast.unparse(n.test) for n in tree.body)
    assert has_main or guarded, f"python -m {module}: {path.name} has neither main() nor a __main__ block"
    if path.name != "__main__.py":  # importing a package's __main__ would run it
        assert callable(getattr(importlib.import_module(module), "main", None)) or guarded


def test_the_readme_names_commands_at_all():
    text = README.read_text(encoding="utf-8")
    assert {"fedlab.evaluate", "fedlab.ask", "fedlab.gate", "fedlab.report"} <= set(_modules(text))
    assert {"sweep", "test", "ui", "export", "gate", "ask", "readme"} <= set(_make_targets(text))


def test_every_make_target_in_the_readme_and_docs_exists():
    targets = _makefile_targets()
    missing = {f"{p.relative_to(ROOT)}: make {t}" for p in PAGES for t in _make_targets(p.read_text(encoding="utf-8"))
               if t not in targets}
    assert not missing, "targets the Makefile lacks:\n" + "\n".join(sorted(missing))


def test_every_relative_link_points_at_a_file_and_heading():
    broken = []
    for page in PAGES:
        for link in _links(page):
            if re.match(r"^[a-z]+:", link):  # http:, https:, mailto:
                continue
            target, _, anchor = link.partition("#")
            path = (page.parent / target).resolve() if target else page
            where = f"{page.relative_to(ROOT)}: ({link})"
            if not path.exists():
                broken.append(f"{where}: no such file")
            elif anchor and path.suffix == ".md" and anchor not in _anchors(path):
                broken.append(f"{where}: no heading #{anchor} in {path.name}")
    assert not broken, "broken links:\n" + "\n".join(broken)


def test_the_readme_links_every_docs_page():
    text = README.read_text(encoding="utf-8")
    linked = {(ROOT / link.partition("#")[0]).resolve() for link in _links(README) if not re.match(r"^[a-z]+:", link)}
    topics = {p.resolve() for p in (ROOT / "docs").glob("*.md")}
    assert not topics - linked, f"docs pages the README does not link: {sorted(p.name for p in topics - linked)}"
    assert text.count("<!-- results:start -->") == 1 and text.count("<!-- results:end -->") == 1


def test_no_page_names_a_work_session():
    pattern = re.compile(r"(?i)\bstops?[ -]?\d+\b|\b(?:this|per|each|that) stop\b|\bstop's\b")
    found = [f"{p.relative_to(ROOT)}: {m.group(0)!r}" for p in PAGES
             for m in pattern.finditer(p.read_text(encoding="utf-8"))]
    assert not found, "name commits or dates instead:\n" + "\n".join(found)


# -- the results box ------------------------------------------------------------------------------
def _estimate(value: float) -> dict:
    return {"value": value, "lo": round(value - 0.05, 6), "hi": round(value + 0.05, 6)}


def _report(accuracy: float) -> dict:
    def pool(sets, n, acc):
        return {"sets": sets, "overall": {"n": n, "answer_accuracy": _estimate(acc),
                                          "false_abstention_rate": _estimate(0.1),
                                          "abstention_accuracy": _estimate(0.9), "recall@10": _estimate(0.7),
                                          "ece": _estimate(0.08)}, "groups": {}}

    return {"config": "production", "created": "2031-02-03T04:05:06+00:00", "git_commit": "abcdef0123456789",
            "pools": {"heldout": pool(["held_a", "held_b"], 40, accuracy - 0.1), "dev": pool(["dev_a"], 30, accuracy)},
            "sets": [], "gap": {}, "group_by": [], "n_boot": 50, "parent_run_id": "r", "measures": []}


def test_the_results_box_is_rewritten_between_its_markers_only(tmp_path):
    readme = tmp_path / "README.md"
    before, after = "# title\n\nintro text\n\n", "\n\n## next\nkept as it was\n"
    readme.write_text(f"{before}<!-- results:start -->\nold box\n<!-- results:end -->{after}", encoding="utf-8")
    (tmp_path / "report.json").write_text(json.dumps(_report(0.62)), encoding="utf-8")

    done = run_python(["-m", "fedlab.report", "--readme", "--out", str(tmp_path), "--readme-file", str(readme)])
    assert done.returncode == 0, done.stderr
    text = readme.read_text(encoding="utf-8")
    assert text.startswith(before + "<!-- results:start -->\n") and text.endswith("<!-- results:end -->" + after)
    assert "old box" not in text
    box = text.split("<!-- results:start -->")[1].split("<!-- results:end -->")[0]
    rows = [line for line in box.splitlines() if line.startswith("| dev") or line.startswith("| heldout")]
    assert [r.split(" | ")[0] for r in rows] == ["| dev", "| heldout"]  # roles in protocol order
    assert "0.620 [0.57, 0.67]" in rows[0] and "0.520 [0.47, 0.57]" in rows[1]
    assert "held_a, held_b" in rows[1] and "| 40 |" in rows[1]
    assert "2031-02-03" in box and "abcdef0" in box

    again = run_python(["-m", "fedlab.report", "--readme", "--out", str(tmp_path), "--readme-file", str(readme)])
    assert again.returncode == 0 and "already current" in again.stderr
    assert readme.read_text(encoding="utf-8") == text


def test_the_results_box_refuses_in_one_line(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("# no markers here\n", encoding="utf-8")
    no_report = run_python(["-m", "fedlab.report", "--readme", "--out", str(tmp_path / "none"),
                            "--readme-file", str(readme)])
    assert no_report.returncode == 2 and "make report" in no_report.stderr
    assert len(no_report.stderr.strip().splitlines()) == 1 and "Traceback" not in no_report.stderr

    (tmp_path / "report.json").write_text(json.dumps(_report(0.5)), encoding="utf-8")
    no_marks = run_python(["-m", "fedlab.report", "--readme", "--out", str(tmp_path), "--readme-file", str(readme)])
    assert no_marks.returncode == 2 and "results:start" in no_marks.stderr
    assert len(no_marks.stderr.strip().splitlines()) == 1
    assert readme.read_text(encoding="utf-8") == "# no markers here\n"


def test_every_docs_page_the_code_and_configs_name_exists():
    """Docstrings and YAML comments point at their docs page (and section): those must exist too."""
    broken = []
    for path in [*sorted((ROOT / "fedlab").rglob("*.py")), *sorted((ROOT / "conf").rglob("*.yaml"))]:
        for ref in re.findall(r"\b(docs/[\w./-]+\.md)(?:#([\w-]+))?", path.read_text(encoding="utf-8")):
            page, anchor = ROOT / ref[0], ref[1]
            where = f"{path.relative_to(ROOT)}: {ref[0]}{'#' + anchor if anchor else ''}"
            if not page.exists():
                broken.append(f"{where}: no such page")
            elif anchor and anchor not in _anchors(page):
                broken.append(f"{where}: no such heading")
    assert not broken, "\n".join(broken)
