"""The release report: its intervals, its registry of question sets and the command end to end."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from clirun import run_python

ROOT = Path(__file__).resolve().parent.parent


def _rows(n: int, seed: int = 1) -> list[dict]:
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        answerable = bool(rng.random() < 0.75)
        abstained = bool(rng.random() < (0.1 if answerable else 0.8))
        answer_correct = answerable and not abstained and bool(rng.random() < 0.6)
        correct = answer_correct or (not answerable and abstained)
        cited = 0 if abstained else int(rng.integers(1, 4))
        rows.append({"id": f"q{i}", "answerable": answerable, "abstained": abstained,
                     "answer_correct": answer_correct, "correct": correct,
                     "confidence": round(float(rng.random()), 1),  # ties, as real confidences have
                     "n_citations": cited, "valid_citations": cited - int(cited > 0 and rng.random() < 0.1),
                     "recall@10": float(rng.random() < 0.7) if answerable else None,
                     "meeting_recall@5": float(rng.random() < 0.8) if answerable else None,
                     "mrr@10": float(rng.random()) if answerable else None,
                     "latency_ms": float(rng.gamma(2.0, 50.0)), "category": "factual" if i % 2 else "temporal",
                     "style": ["keyword", "chatty", "plain"][i % 3]})
    return rows


def test_point_estimates_equal_the_harness_measures():
    """The vectorised measures on the questions as they are equal fedlab's own definitions."""
    from fedlab.evaluation.answers.calibration import brier, ece
    from fedlab.evaluation.answers.selective import auroc, coverage_at_precision
    from fedlab.evaluation.report.intervals import Outcomes, estimate

    rows = _rows(300)
    est = estimate(Outcomes.from_rows(rows, ("category",)), n_boot=200).estimates
    conf, correct = [r["confidence"] for r in rows], [r["correct"] for r in rows]
    answerable = [r for r in rows if r["answerable"]]
    assert est["answer_accuracy"].value == pytest.approx(np.mean([r["answer_correct"] for r in answerable]))
    assert est["false_abstention_rate"].value == pytest.approx(np.mean([r["abstained"] for r in answerable]))
    assert est["abstention_accuracy"].value == pytest.approx(
        np.mean([r["abstained"] for r in rows if not r["answerable"]]))
    assert est["citation_validity"].value == pytest.approx(
        sum(r["valid_citations"] for r in rows) / sum(r["n_citations"] for r in rows))
    assert est["ece"].value == pytest.approx(ece(conf, correct))
    assert est["brier"].value == pytest.approx(brier(conf, correct))
    assert est["auroc"].value == pytest.approx(auroc(conf, correct))
    assert est["coverage@precision0.9"].value == pytest.approx(coverage_at_precision(conf, correct))
    assert est["recall@10"].value == pytest.approx(np.mean([r["recall@10"] for r in answerable]))
    assert est["latency_p95_ms"].value == pytest.approx(np.percentile([r["latency_ms"] for r in rows], 95))


def test_intervals_cover_the_estimate_and_narrow_with_more_questions():
    from fedlab.evaluation.report.intervals import Outcomes, estimate

    small = estimate(Outcomes.from_rows(_rows(60)), n_boot=400).estimates
    large = estimate(Outcomes.from_rows(_rows(960)), n_boot=400).estimates
    for name in ("answer_accuracy", "ece", "auroc", "recall@10"):
        for est in (small[name], large[name]):
            assert est.lo <= est.value <= est.hi or name == "ece"  # ECE is biased upwards on resamples
        assert (large[name].hi - large[name].lo) < (small[name].hi - small[name].lo)


def test_the_gap_is_a_difference_with_its_own_interval():
    from fedlab.evaluation.report.intervals import Outcomes, difference, estimate

    good = _rows(400, seed=2)
    for r in good:  # the same questions answered right more often
        if r["answerable"] and not r["abstained"]:
            r["answer_correct"] = r["correct"] = True
    a, b = estimate(Outcomes.from_rows(good), n_boot=300), estimate(Outcomes.from_rows(_rows(400, seed=3)), n_boot=300)
    gap = difference(a, b)["answer_accuracy"]
    assert gap.value == pytest.approx(a.estimates["answer_accuracy"].value - b.estimates["answer_accuracy"].value)
    assert 0 < gap.lo <= gap.value <= gap.hi


def test_groups_split_by_any_field():
    from fedlab.evaluation.report.intervals import Outcomes
    from fedlab.evaluation.report.run import _grouped

    outcomes = Outcomes.from_rows(_rows(90), ("category", "style"))
    by_style = _grouped(outcomes, "style", 100, 0)
    assert set(by_style) == {"keyword", "chatty", "plain"}
    assert sum(g["n"] for g in by_style.values()) == 90
    assert _grouped(outcomes, "missing_field", 100, 0) == {}


def test_every_registered_set_has_a_role_and_a_file():
    from fedlab.dataset.registry import ROLES, registered_sets

    sets = registered_sets()
    assert {s.role for s in sets} >= {"dev", "heldout", "test"}
    for s in sets:
        assert s.role in ROLES and s.path.is_file(), s


def test_a_set_reads_as_heldout_once_its_path_is_another_file(tmp_path):
    from fedlab.config import compose

    assert compose("evaluate", ["dataset=fresh_dev6"]).dataset.role == "dev"
    assert compose("evaluate", ["dataset=fresh_dev7"]).dataset.role == "heldout"
    assert compose("evaluate", ["dataset=fomc_qa_test"]).dataset.role == "test"
    other = compose("evaluate", [f"dataset.path={tmp_path / 'mine.jsonl'}"]).dataset
    assert other.role == "heldout"
    assert compose("evaluate", [f"dataset.path={tmp_path / 'mine.jsonl'}", "dataset.role=dev"]).dataset.role == "dev"


def test_the_test_split_always_reads_as_test():
    from fedlab.dataset.registry import effective_role
    from fedlab.evaluation.retrieval.harness import load_split

    path = ROOT / "datasets/fomc_qa/fomc_qa.jsonl"
    assert effective_role("dev", load_split(path, "test")) == "test"
    assert effective_role("dev", load_split(path, "dev")) == "dev"
    assert effective_role(None, load_split(path, "dev")) == "heldout"


def test_ids_select_half_a_file_and_a_pool_joins_sets():
    from fedlab.config import compose
    from fedlab.evaluation.retrieval.harness import load_questions

    half, _ = load_questions(compose("evaluate", ["dataset=fresh_dev4_a"]).dataset)
    assert half and all(q.id.startswith("fh-a-") for q in half)
    pool, version = load_questions(compose("evaluate", ["dataset=dev_sets"]).dataset)
    assert len({q.id for q in pool}) == len(pool) > len(half)
    assert {q.id for q in half} <= {q.id for q in pool} and len(version) == 16


def test_the_reader_study_composes_on_production():
    from hydra import compose, initialize_config_dir

    from fedlab.config import CONF_DIR

    with initialize_config_dir(str(CONF_DIR), version_base="1.3"):
        cfg = compose("production", ["+experiment=reader"], return_hydra_config=True)
    assert cfg.dataset.name == "dev_sets" and cfg.objective == "answer_accuracy"
    assert any(k.startswith("lm.") for k in cfg.hydra.sweeper.params)
    assert any(k.startswith("agent.") for k in cfg.hydra.sweeper.params)


# -- the command, end to end ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def report_env(tmp_path_factory, corpus_dir):
    base = tmp_path_factory.mktemp("report")
    data = corpus_dir.parent.parent
    rows = [json.loads(x) for x in (ROOT / "datasets/fomc_qa/fomc_qa.jsonl").read_text().splitlines()]
    private = [dict(r, style="plain" if i % 2 else "keyword") for i, r in
               enumerate([r for r in rows if r["split"] == "test"][:10])]
    (base / "private.jsonl").write_text("".join(json.dumps(r) + "\n" for r in private))
    env = {"MLFLOW_TRACKING_URI": f"sqlite:///{base / 'mlflow.db'}"}
    args = ["-m", "fedlab.report", "--config", "evaluate", "--set", "retriever=bm25", "--set", "agent=default",
            "--set", "lm=extractive", "--set", f"agent.calibration={ROOT / 'conf/calibration/extractive-bm25.json'}",
            "--set", f"paths.data_dir={data}", "--only", "fresh_dev4_b", "--set-file", str(base / "private.jsonl"),
            "--group-by", "style", "--bootstrap", "200", "--no-progress"]
    first = run_python([*args, "--out", str(base / "first")], env=env)
    second = run_python([*args, "--out", str(base / "second"), "--against", str(base / "first" / "report.json")],
                        env=env)
    return {"base": base, "first": first, "second": second, "uri": env["MLFLOW_TRACKING_URI"], "data_dir": data}


def test_report_writes_sets_pools_and_groups(report_env):
    proc = report_env["first"]
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = json.loads((report_env["base"] / "first" / "report.json").read_text())
    names = {s["name"]: s for s in data["sets"]}
    assert set(names) == {"fresh_dev4_b", "private"}
    assert names["fresh_dev4_b"]["role"] == "heldout" and names["private"]["role"] == "test"
    acc = names["fresh_dev4_b"]["overall"]["answer_accuracy"]
    assert 0 <= acc["lo"] <= acc["value"] <= acc["hi"] <= 1
    assert set(data["pools"]) == {"heldout", "test"}
    assert set(names["private"]["groups"]["style"]) == {"plain", "keyword"}
    assert "category" in names["fresh_dev4_b"]["groups"]
    md = (report_env["base"] / "first" / "report.md").read_text()
    assert "fresh_dev4_b" in md and "## Per style" in md
    for png in ("report_accuracy.png", "risk_coverage.png"):
        assert (report_env["base"] / "first" / png).stat().st_size > 1000
    assert "Traceback" not in proc.stderr


def test_report_logs_a_parent_run_with_a_child_per_set(report_env):
    from mlflow.tracking import MlflowClient

    data = json.loads((report_env["base"] / "first" / "report.json").read_text())
    client = MlflowClient(report_env["uri"])
    parent = client.get_run(data["parent_run_id"])
    assert parent.data.tags["fedlab.report"] == "parent"
    assert "heldout.answer_accuracy" in parent.data.metrics and "test.answer_accuracy.lo" in parent.data.metrics
    children = client.search_runs([parent.info.experiment_id],
                                  filter_string=f"tags.mlflow.parentRunId = '{parent.info.run_id}'")
    assert {c.data.tags["report_set"] for c in children} == {"fresh_dev4_b", "private"}
    assert {c.data.tags["dataset_role"] for c in children} == {"heldout", "test"}
    assert {a.path for a in client.list_artifacts(parent.info.run_id)} >= {"report.json", "report.md"}


def test_every_read_of_test_is_counted(report_env):
    first = json.loads((report_env["base"] / "first" / "report.json").read_text())
    second = json.loads((report_env["base"] / "second" / "report.json").read_text())
    assert second["test_reads"]["count"] == first["test_reads"]["count"] + 1 >= 2


def test_against_gives_a_paired_change_per_set(report_env):
    proc = report_env["second"]
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = json.loads((report_env["base"] / "second" / "report.json").read_text())
    for s in data["sets"]:
        row = s["against"]["answer_accuracy"]
        assert row["delta"] == pytest.approx(row["b"] - row["a"])
        assert row["delta"] == pytest.approx(0.0)  # the same config twice: the same answers
        assert s["changed_answers"]["n"] == 0 and s["changed_answers"]["of"] == s["overall"]["n"]
    md = (report_env["base"] / "second" / "report.md").read_text()
    assert "Against the earlier report" in md and "## Changed answers" in md


def test_ablate_answers_each_skills_questions_again_without_it(report_env):
    """python -m fedlab.ablate: per skill that fired in the report, its questions answered with and
    without it; the counts agree with each other; a report that is not there is one line."""
    base = report_env["base"]
    args = ["-m", "fedlab.ablate", "--config", "evaluate", "--set", "retriever=bm25", "--set", "agent=default",
            "--set", "lm=extractive", "--set", f"agent.calibration={ROOT / 'conf/calibration/extractive-bm25.json'}",
            "--report", str(base / "first" / "report.json"), "--roles", "heldout", "--out", str(base / "ablate"),
            "--no-progress"]
    first = json.loads((base / "first" / "report.json").read_text())
    proc = run_python([*args, "--set", f"paths.data_dir={report_env['data_dir']}"],
                      env={"MLFLOW_TRACKING_URI": report_env["uri"]})
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads((base / "ablate" / "skills_ablation.json").read_text())
    answers = [json.loads(x) for x in (Path(next(s["local_dir"] for s in first["sets"] if s["name"] == "fresh_dev4_b"))
                                       / "agent_answers.jsonl").read_text().splitlines()]
    fired = {k for a in answers for k in a.get("skills") or () if k != "reader"}
    assert set(out["skills"]) == fired and fired
    for skill, roles in out["skills"].items():
        row = roles["heldout"]
        assert row["fires"] == sum(skill in (a.get("skills") or ()) for a in answers)
        assert row["right_on"] - row["only_on"] == row["right_off"] - row["only_off"] >= 0
        assert max(row["right_on"], row["right_off"]) <= row["fires"]
    assert "| skill | role | fires |" in (base / "ablate" / "skills_ablation.md").read_text()
    gone = run_python(["-m", "fedlab.ablate", "--report", str(base / "absent.json")])
    assert gone.returncode == 2 and "is not a readable report" in gone.stderr and "Traceback" not in gone.stderr


def test_changed_answers_counts_a_different_text_abstention_or_skill(tmp_path):
    from fedlab.evaluation.report.changed import changed_answers, changed_between

    def row(qid, answer="A [1]", abstained=False, skill="reader", **rest):
        return {"id": qid, "answer": answer, "abstained": abstained, "skill": skill, "confidence": 0.5, **rest}

    earlier = [row("same"), row("text"), row("abstains"), row("skill"), row("gone")]
    later = [row("same", confidence=0.9, latency_ms={"total": 3}), row("text", answer="B [1]"),
             row("abstains", abstained=True), row("skill", skill="rate_path"), row("new")]
    got = changed_answers(earlier, later)
    assert got.changed == ("text", "abstains", "skill") and got.compared == 4
    for name, rows in (("a", earlier), ("b", later)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "agent_answers.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert changed_between(str(tmp_path / "a"), str(tmp_path / "b")).to_json()["n"] == 3
    (tmp_path / "c").mkdir()
    assert changed_between(str(tmp_path / "a"), str(tmp_path / "c")) is None  # no agent answers: nothing to say


def test_the_report_shows_changed_answers_per_set():
    from fedlab.evaluation.report.render import markdown

    est = {"n": 2}
    data = {"config": "c", "git_commit": "g", "created": "t", "parent_run_id": "p", "n_boot": 50, "group_by": [],
            "pools": {}, "gap": None,
            "sets": [{"name": "s1", "role": "dev", "overall": est, "changed_answers": {"n": 1, "of": 2, "ids": ["q7"]}},
                     {"name": "s2", "role": "dev", "overall": est, "changed_answers": {"n": 0, "of": 2, "ids": []}}]}
    md = markdown(data)
    assert "| s1 | 1 | 2 | q7 |" in md and "| s2 | 0 | 2 |  |" in md


def test_a_bad_set_name_is_one_line(tmp_path):
    proc = run_python(["-m", "fedlab.report", "--only", "no_such_set", "--out", str(tmp_path)])
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and "no registered question set 'no_such_set'" in proc.stderr


def test_release_writes_the_refit_thresholds_into_the_config(tmp_path):
    """`python -m fedlab.calibrate --update-config FILE` (make release) sets agent.answerability to
    the thresholds the model chose and keeps the file's comments and other keys."""
    import shutil

    import yaml

    from fedlab.agent.answerability import load_model
    from fedlab.calibrate import update_thresholds

    config = tmp_path / "production.yaml"
    text = (ROOT / "conf/production.yaml").read_text()
    config.write_text(text.replace("threshold: 0.94995", "threshold: 0.5"))
    model = tmp_path / "model.json"
    shutil.copyfile(ROOT / "conf/calibration/production.json", model)
    update_thresholds(str(config), str(model))
    after = config.read_text()
    assert after.startswith("# fedlab production config")
    data = yaml.safe_load(after)
    assert data["agent"]["answerability"]["threshold"] == pytest.approx(load_model(model).threshold, abs=1e-6)
    assert data["retriever"] == yaml.safe_load(text)["retriever"]


def test_a_model_fitted_on_other_settings_or_code_is_stale(tmp_path):
    """The model records the fingerprint of what produced its features; another reader setting,
    or no fingerprint at all, reads as stale with the refit command; the same fingerprint as current."""
    from fedlab.agent.fingerprint import check_model, fingerprint
    from fedlab.config import compose

    model = tmp_path / "model.json"
    data = json.loads((ROOT / "conf/calibration/production.json").read_text())
    cfg = compose("production", [f"agent.calibration={model}"])
    data["meta"]["fingerprint"] = fingerprint(cfg)
    model.write_text(json.dumps(data))
    assert not check_model(cfg).stale
    other = compose("production", [f"agent.calibration={model}", "lm.max_sentences=3"])
    check = check_model(other)
    assert check.stale and "settings" in check.line and "python -m fedlab.calibrate --config" in check.line
    assert not check_model(compose("production", [f"agent.calibration={model}", "agent.thresholds.high=0.8"])).stale
    del data["meta"]["fingerprint"]
    old = tmp_path / "old.json"
    old.write_text(json.dumps(data))
    assert check_model(compose("production", [f"agent.calibration={old}"])).stale


def test_the_gate_refuses_a_stale_model_in_one_line(tmp_path):
    model = tmp_path / "model.json"
    data = json.loads((ROOT / "conf/calibration/production.json").read_text())
    data["meta"].pop("fingerprint", None)
    model.write_text(json.dumps(data))
    proc = run_python(["-m", "fedlab.gate", f"agent.calibration={model}"])
    assert proc.returncode == 2
    assert "stale" in proc.stderr or "no fingerprint" in proc.stderr
    assert "python -m fedlab.calibrate" in proc.stderr and "Traceback" not in proc.stderr


def test_a_bad_against_is_one_line_before_any_evaluation(tmp_path):
    proc = run_python(["-m", "fedlab.report", "--only", "fresh_dev3", "--against", str(tmp_path / "nope.json"),
                       "--out", str(tmp_path)], env={"MLFLOW_TRACKING_URI": f"sqlite:///{tmp_path / 'm.db'}"})
    assert proc.returncode == 2 and "no such report.json" in proc.stderr
    assert "set 1 of" not in proc.stderr and "Traceback" not in proc.stderr
