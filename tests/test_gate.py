"""The gate as a regression record: the record file, the data check, the tolerance rule and
``--record``, through ``python -m fedlab.gate``'s own main with the evaluation stubbed out (the
real evaluation behind it is exercised in test_trust.py and test_evaluate.py)."""
from __future__ import annotations

import datetime as dt

from pathlib import Path

import pytest
import yaml

from fedlab.errors import FedlabError
from fedlab.evaluation import gates
from fedlab.gate import EXIT_BREACH, EXIT_CANNOT_RUN, EXIT_DATA_CHANGED, EXIT_PASS, main

ROOT = Path(__file__).resolve().parent.parent
CORPUS, DATASET = "c0ffee0000000001", "da7a000000000001"
HEADER = "# my record\n# kept on --record\n"


def write_record(path: Path, expected: dict, tolerance: float = 0.03, **extra) -> Path:
    body = {"split": "test", "corpus_hash": CORPUS, "dataset_hash": DATASET, "tolerance": tolerance,
            "tolerances": {}, "expected": expected, **extra}
    path.write_text(HEADER + yaml.safe_dump(body, sort_keys=False))
    return path


@pytest.fixture
def measured(monkeypatch):
    """The data the gate finds (corpus CORPUS, dataset DATASET) and the metrics it measures."""
    metrics = {"recall@5": 0.70, "mrr@10": 0.55}
    calls = []

    def measure(cfg):
        calls.append(cfg.dataset.split)
        return dict(metrics)

    monkeypatch.setattr(gates, "data_version", lambda cfg: gates.DataVersion(CORPUS, DATASET, str(cfg.dataset.split)))
    monkeypatch.setattr(gates, "_measure", measure)
    return {"metrics": metrics, "calls": calls}


def gate(record: Path, *args: str) -> int:
    # --config evaluate: an exported config's own data check (production:) is test_trust's business
    return main(["--config", "evaluate", "--gates", str(record), *args])


def test_the_shipped_record_is_the_production_configs_data():
    record = gates.read_record(gates.DEFAULT_RECORD)
    production = yaml.safe_load((ROOT / "conf" / "production.yaml").read_text())["production"]
    assert (record.corpus_hash, record.dataset_hash) == (production["corpus_hash"], production["dataset_hash"])
    assert record.split == "test" and record.tolerance == 0.03
    assert set(record.expected) == {"recall@5", "recall@10", "mrr@10", "ndcg@10", "doc_recall@5", "meeting_recall@5",
                                    "abstention_accuracy", "answer_accuracy", "citation_validity"}
    # rewriting it changes nothing: what --record writes is the file's own layout
    text = gates.DEFAULT_RECORD.read_text()
    assert gates.record_text(record, gates.leading_comments(gates.DEFAULT_RECORD)) == text


def test_within_tolerance_passes(measured, tmp_path, capsys):
    record = write_record(tmp_path / "g.yaml", {"recall@5": 0.72, "mrr@10": 0.55})  # 0.70 >= 0.72 - 0.03
    assert gate(record) == EXIT_PASS
    out = capsys.readouterr()
    assert "pass" in out.out and "FAIL" not in out.out and "stale" not in out.out
    assert "0.6900" in out.out  # the threshold shown: expected - tolerance
    assert measured["calls"] == ["test"]


def test_below_tolerance_fails_and_names_the_metric(measured, tmp_path, capsys):
    record = write_record(tmp_path / "g.yaml", {"recall@5": 0.74, "mrr@10": 0.55})  # 0.70 < 0.74 - 0.03
    assert gate(record) == EXIT_BREACH
    err = capsys.readouterr().err
    assert "gate failed: recall@5 = 0.7000 is below its threshold 0.7100" in err
    assert "mrr@10" not in err


def test_a_per_metric_tolerance_overrides_the_default(measured, tmp_path):
    record = write_record(tmp_path / "g.yaml", {"recall@5": 0.72, "mrr@10": 0.55}, tolerances={"recall@5": 0.01})
    assert gate(record) == EXIT_BREACH


def test_better_than_the_record_passes_but_says_it_is_stale(measured, tmp_path, capsys):
    record = write_record(tmp_path / "g.yaml", {"recall@5": 0.60, "mrr@10": 0.55})  # 0.70 > 0.60 + 0.03
    assert gate(record) == EXIT_PASS
    out = capsys.readouterr().out
    assert "record stale: recall@5 = 0.7000 is above expected 0.6000" in out and "--record" in out
    assert "stale: mrr@10" not in out


def test_set_makes_a_value_the_minimum_for_one_run(measured, tmp_path, capsys):
    record = write_record(tmp_path / "g.yaml", {"recall@5": 0.70})
    assert gate(record, "--set", "recall@5=0.71") == EXIT_BREACH  # no tolerance below a --set minimum
    assert gate(record, "--set", "recall@5=0.0") == EXIT_PASS
    assert "stale" not in capsys.readouterr().out  # a --set minimum is not the record
    assert gate(record, "--set", "recall@5") == EXIT_CANNOT_RUN
    assert "use METRIC=NUMBER" in capsys.readouterr().err


@pytest.mark.parametrize("what, field, fix", [("corpus", "corpus_hash", "rebuild the corpus (`make data`)"),
                                              ("dataset", "dataset_hash", "restore the dataset file")])
def test_a_hash_mismatch_is_its_own_failure(measured, tmp_path, capsys, what, field, fix):
    record = write_record(tmp_path / "g.yaml", {"recall@5": 0.70})
    body = yaml.safe_load(record.read_text())
    body[field] = "0000000000000000"
    record.write_text(yaml.safe_dump(body))
    assert gate(record) == EXIT_DATA_CHANGED
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"gate refused: data mismatch with {record}: the {what} is ")
    assert "recorded on 0000000000000000" in lines[0] and fix in lines[0]
    assert "python -m fedlab.gate --record" in lines[0]
    assert measured["calls"] == []  # refused before anything is measured
    assert gate(record, "--allow-data-change") == EXIT_PASS
    assert "gated anyway (--allow-data-change): data mismatch" in capsys.readouterr().err


def test_another_split_than_recorded_is_a_data_mismatch(measured, tmp_path, capsys):
    record = write_record(tmp_path / "g.yaml", {"recall@5": 0.70})
    assert gate(record, "--split", "dev") == EXIT_DATA_CHANGED
    assert "recorded on the test split, not dev" in capsys.readouterr().err
    assert measured["calls"] == []


def test_record_round_trips(measured, tmp_path, capsys):
    record = write_record(tmp_path / "g.yaml", {"recall@5": 0.50, "mrr@10": 0.40}, tolerance=0.02,
                          tolerances={"mrr@10": 0.05})
    measured["metrics"].update({"recall@5": 0.712345, "mrr@10": 0.56789, "ndcg@10": 0.6})
    assert gate(record, "--record") == EXIT_PASS
    assert "recorded" in capsys.readouterr().out
    text = record.read_text()
    assert text.startswith(HEADER)
    again = gates.read_record(record)
    assert again.recorded_at and dt.datetime.fromisoformat(again.recorded_at) <= dt.datetime.now(dt.timezone.utc)
    assert again == gates.GateRecord("test", CORPUS, DATASET, 0.02, {"recall@5": 0.7123, "mrr@10": 0.5679},
                                     {"mrr@10": 0.05}, again.recorded_at)
    assert not list(tmp_path.glob(".g.yaml.*"))  # written atomically: no temporary file left behind
    assert gate(record) == EXIT_PASS
    assert "stale" not in capsys.readouterr().out
    assert gate(record, "--record", "--set", "recall@5=0.1") == EXIT_CANNOT_RUN


def test_record_writes_the_data_it_measured(measured, tmp_path, monkeypatch):
    record = write_record(tmp_path / "g.yaml", {"recall@5": 0.70})
    monkeypatch.setattr(gates, "data_version", lambda cfg: gates.DataVersion("feed", "beef", "test"))
    assert gate(record) == EXIT_DATA_CHANGED
    assert gate(record, "--record") == EXIT_PASS
    assert (gates.read_record(record).corpus_hash, gates.read_record(record).dataset_hash) == ("feed", "beef")
    assert gate(record) == EXIT_PASS


def test_record_to_a_new_file_gates_the_shipped_metrics(measured, tmp_path):
    measured["metrics"].update({m: 0.5 for m in gates.read_record(gates.DEFAULT_RECORD).expected})
    new = tmp_path / "dev-gates.yaml"
    assert main(["--config", "evaluate", "--gates", str(new), "--split", "dev", "--record"]) == EXIT_PASS
    record = gates.read_record(new)
    assert record.split == "dev" and measured["calls"] == ["dev"]
    assert set(record.expected) == set(gates.read_record(gates.DEFAULT_RECORD).expected)
    assert new.read_text().startswith(gates.leading_comments(gates.DEFAULT_RECORD))


@pytest.mark.parametrize("body, message", [
    ({"thresholds": {"recall@5": 0.6}}, "unknown key(s) thresholds"),
    ({"split": "test", "tolerance": 0.03, "expected": {"recall@5": 0.6}}, "records no corpus_hash, dataset_hash"),
    ({"split": "test", "corpus_hash": "a", "dataset_hash": "b", "tolerance": -1, "expected": {"recall@5": 0.6}},
     "a tolerance is negative"),
    ({"split": "test", "corpus_hash": "a", "dataset_hash": "b", "tolerance": 0.03, "expected": {"recall@5": "high"}},
     "must be numbers"),
    (["recall@5"], "is not a mapping"),
    ("split: test\ncorpus_hash: 0000000000000000\ndataset_hash: b\ntolerance: 0.03\nexpected: {recall@5: 0.6}\n",
     "corpus_hash 0 is not text: quote it"),
])
def test_a_bad_record_is_one_line(tmp_path, body, message):
    path = tmp_path / "g.yaml"
    path.write_text(body if isinstance(body, str) else yaml.safe_dump(body))
    with pytest.raises(FedlabError, match=message.replace("(", r"\(").replace(")", r"\)")) as err:
        gates.read_record(path)
    assert "\n" not in str(err.value)


def test_a_missing_record_cannot_run(tmp_path, capsys):
    assert gate(tmp_path / "none.yaml") == EXIT_CANNOT_RUN
    assert "could not run: gates file" in capsys.readouterr().err
