"""Fit the agent's answerability model on a split (the task behind ``python -m fedlab.calibrate``).

The agent answers every question of the split — and of the calibration set
(``dataset.calibration_path``: questions written after the agent was built, never used to
develop it, so its answers to them are as right as they are on new questions) — with no model
(every question it searches is answered from its first search) and records each question's
features; an answer is correct when it is an answer to an answerable question stating all key
facts (judged by ``measures.judge_answer``). The model (fedlab.agent.answerability: off-topic, answerable and
correctness heads) is fitted on those rows, its abstention thresholds chosen out of fold for the
stated targets (fedlab.agent.answerability_fit), and written as plain JSON
(default ``conf/calibration/<lm>-<retriever>.json``: the features depend on both).
``--cross-fit`` instead measures the modelled agent on the split with each question answered by a
model fitted without it (``cross_fit``).
"""
from __future__ import annotations

from collections import Counter

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from rich.console import Console

from fedlab.agent.answerability import AnswerabilityModel
from fedlab.agent.types import FACT_ABSTENTIONS
from fedlab.errors import FedlabError


METHODS = ("logistic", "platt")
CALIBRATION_SET = "calibration set"  # the source name of dataset.calibration_path's questions
FIT_SET_ROLES = ("dev", "train")  # the roles a set joining the fit (dataset.fit_sets) may have


@dataclass
class CalibrationResult:
    model: AnswerabilityModel
    out: Path  # where the model was written
    split: str
    n_questions: int  # the split's and the calibration set's
    n_searched: int  # questions the agent searched: the rows the model was fitted on
    n_correct: int  # of those, answered correctly with no model
    n_calibration_set: int  # of n_questions, the calibration set's
    target_precision: float
    max_false_abstention: float | None = None
    max_withheld_correct: float | None = None


def compose_for_agent(config: str, sets: Sequence[str], split: str):
    """``config`` with the agent and lm groups selected (defaults added when neither names them),
    the model switched off (the mode it is fitted in), on ``split``."""
    from fedlab.agent.settings import compose_with_agent
    from fedlab.schema import check_schema

    cfg = compose_with_agent(config, [*sets, "agent.calibration=null", f"dataset.split={split}"])
    check_schema(cfg)
    return cfg


def config_path(out: Path) -> str:
    """How a config names ``out``: under the checkout via ${paths.root_dir}, else absolute."""
    from fedlab.config import CONF_DIR

    try:
        return "${paths.root_dir}/" + out.resolve().relative_to(CONF_DIR.resolve().parent).as_posix()
    except ValueError:
        return str(out.resolve())


def print_result(result: CalibrationResult, console: Console) -> None:
    """What was fitted (stderr), then the lines that make a config use it (stdout)."""
    from fedlab.agent.answerability_fit import HARD_FEATURE

    model, out, target = result.model, result.out, result.target_precision
    extra = f" + {result.n_calibration_set} of the {CALIBRATION_SET}" if result.n_calibration_set else ""
    console.print(f"{result.n_questions - result.n_calibration_set} {result.split} questions{extra} "
                  f"({result.n_searched} searched, {result.n_correct} answered correctly with no model); "
                  f"answerability model -> {out}")
    budget = result.max_false_abstention
    spent = "" if budget is None else f", false abstention <= {budget:.2f} with the answer threshold"
    console.print(f"threshold P(answerable) >= {model.threshold:.3f} for precision {target:.2f}{spent} (out of fold): "
                  f"answers {model.meta['oof_answered']:.2f} of the searched questions, abstains on "
                  f"{model.meta['oof_abstention_on_unanswerable']:.2f} of the unanswerable, "
                  f"{model.meta['oof_false_abstention']:.2f} of the answerable; AUROC answerable "
                  f"{model.meta['oof_auroc_answerable']:.3f}, correct | answerable {model.meta['oof_auroc_correct']:.3f}, "
                  f"off topic {model.meta['oof_auroc_off_topic']:.3f}")
    if HARD_FEATURE in model.meta.get("correctness_held", ()):
        console.print(f"correctness head: {model.meta['n_hard_sampled']} questions written toward hard ones "
                      "(dataset.calibration_hard_ids) told apart, P(correct) reported for questions as they come")
    if model.question is not None:
        console.print(f"question head over {model.meta.get('embedder')} embeddings: AUROC answerable "
                      f"{model.meta['oof_auroc_question']:.3f} from the question alone (out of fold)")
    if model.question_off_topic is not None:
        console.print(f"off-topic question head over the same embeddings: AUROC off topic "
                      f"{model.meta['oof_auroc_question_off_topic']:.3f} from the question alone (out of fold)")
    withheld = result.max_withheld_correct
    if withheld is not None:
        kept = model.meta["oof_withheld"]
        console.print(f"answer threshold P(correct) >= {model.answer_threshold:.3f}, withholding at most {withheld:.2f} "
                      f"of the right answers (out of fold): withholds {kept['correct']} right, {kept['wrong']} wrong "
                      f"answers and {kept['unanswerable']} to unanswerable questions; then abstains on "
                      f"{model.meta['oof_abstention_on_unanswerable_after']:.2f} of the unanswerable, "
                      f"{model.meta['oof_false_abstention_after']:.2f} of the answerable")
    console.print("add to the production config (YAML), or pass the overrides:")
    print(f"agent:\n  calibration: {config_path(out)}\n  answerability:\n    threshold: {model.threshold}\n"
          f"    answer_threshold: {model.answer_threshold}\n    target_precision: {target}"
          + ("" if budget is None else f"\n    max_false_abstention: {budget}")
          + ("" if withheld is None else f"\n    max_withheld_correct: {withheld}"))
    print(f"agent.calibration='{config_path(out)}' agent.answerability.threshold={model.threshold} "
          f"agent.answerability.answer_threshold={model.answer_threshold}")


CROSS_FIT_SHOWN = ("answer_accuracy", "abstention_accuracy", "false_abstention_rate", "citation_validity", "ece",
                   "ece_if_calibrated", "brier", "auroc", "coverage@precision0.9")


def print_cross_fit(cross: CrossFit, split: str) -> None:
    """The cross-fitted measures on stdout, one ``name value`` per line: the selective-answering
    ones, then answer accuracy and abstention by category — for every question, then (with a
    calibration set) for each source apart, each block under a ``#`` line."""
    blocks = [(f"{split}{' + ' + CALIBRATION_SET if cross.by_source else ''}, cross-fitted: each question "
               "answered by a model fitted without it", cross.outcome.metrics)]
    blocks += [(f"{source} ({n} questions)", metrics) for source, (n, metrics) in cross.by_source.items()]
    for title, metrics in blocks:
        print(f"# {title}")
        for name in (*CROSS_FIT_SHOWN, *sorted(k for k in metrics
                                               if k.startswith(("answer_accuracy.", "abstention_rate.")))):
            if name in metrics:
                print(f"{name} {metrics[name]:.4f}")


def threshold_targets(cfg, target_precision: float | None, max_false_abstention: float | None) -> tuple[float, float | None]:
    """The threshold's targets: the arguments, else ``agent.answerability``'s, checked."""
    answerability = cfg.agent.get("answerability", {})
    target = target_precision if target_precision is not None else \
        float(answerability.get("target_precision") or 0.9)
    if not 0.0 < target <= 1.0:
        raise FedlabError(f"--target-precision={target} must be in (0, 1]")
    budget = max_false_abstention if max_false_abstention is not None else \
        answerability.get("max_false_abstention")
    if budget is not None:
        budget = float(budget)
        if not 0.0 <= budget < 1.0:
            raise FedlabError(f"--max-false-abstention={budget} must be in [0, 1)")
    return target, budget


def correctness_from(cfg) -> str:
    """``agent.answerability.correctness_from``: the rows the correctness head is fitted on."""
    return str(cfg.agent.get("answerability", {}).get("correctness_from") or "all")


def withheld_target(cfg) -> float | None:
    """``agent.answerability.max_withheld_correct``, checked: the share of right answers the answer
    threshold may withhold (None: no answer threshold)."""
    value = cfg.agent.get("answerability", {}).get("max_withheld_correct")
    if value is None:
        return None
    if not 0.0 <= float(value) < 1.0:
        raise FedlabError(f"agent.answerability.max_withheld_correct={value} must be in [0, 1)")
    return float(value)


def calibration_set(cfg) -> list:
    """The questions of ``dataset.calibration_path`` in ``cfg``'s split ([] when it is null)."""
    from fedlab.dataset.schema import load_dataset
    from fedlab.evaluation.retrieval.harness import check_unique_ids

    path = cfg.dataset.get("calibration_path")
    if not path:
        return []
    if not Path(path).is_file():
        raise FedlabError(f"dataset.calibration_path={path} does not exist: point it at a JSONL file in the fomc_qa "
                          "schema, or pass dataset.calibration_path=null to fit on the split alone")
    split = cfg.dataset.split
    return [q for q in check_unique_ids(load_dataset(path), path) if split == "all" or q.split == split]


REWORDING_STYLES = ("terse", "chatty")


def calibration_rewordings(cfg) -> dict[str, list[str]]:
    """``dataset.calibration_rewordings_path``'s rewordings, by the id of the question each rewords
    ({} when it is null). A line is ``{"of": id, "style": "terse" | "chatty", "question": text}``;
    every ``of`` must be the id of a question of ``dataset.path`` or ``dataset.calibration_path``
    (of any split: those outside the split fitted on are not read)."""
    from fedlab.dataset.schema import load_dataset, read_lines

    path = cfg.dataset.get("calibration_rewordings_path")
    if not path:
        return {}
    if not Path(path).is_file():
        raise FedlabError(f"dataset.calibration_rewordings_path={path} does not exist: point it at a JSONL file of "
                          "{\"of\", \"style\", \"question\"} lines, or pass dataset.calibration_rewordings_path=null")
    ids = {q.id for q in load_dataset(cfg.dataset.path)}
    if cfg.dataset.get("calibration_path"):
        ids |= {q.id for q in load_dataset(cfg.dataset.calibration_path)}
    out: dict[str, list[str]] = {}
    for line, row in read_lines(path):
        if not (isinstance(row, dict) and isinstance(row.get("question"), str) and row["question"].strip()
                and row.get("style") in REWORDING_STYLES and isinstance(row.get("of"), str)):
            raise FedlabError(f"{path}:{line}: a rewording is {{\"of\": question id, \"style\": "
                              f"{' | '.join(REWORDING_STYLES)}, \"question\": text}}: fix or remove the line")
        if row["of"] not in ids:
            raise FedlabError(f"{path}:{line}: rewords {row['of']!r}, which is no question of dataset.path or "
                              "dataset.calibration_path: fix its id, or pass dataset.calibration_rewordings_path=null")
        out.setdefault(row["of"], []).append(row["question"].strip())
    return out


def hard_sampled(cfg):
    """``dataset.calibration_hard_ids``, compiled: the ids of the calibration set's questions that
    were written toward the kinds of question the agent finds hard (None: none were)."""
    pattern = cfg.dataset.get("calibration_hard_ids")
    if not pattern:
        return None
    try:
        return re.compile(str(pattern))
    except re.error as exc:
        raise FedlabError(f"dataset.calibration_hard_ids={pattern!r} is not a regular expression ({exc}): "
                          "give one that matches the start of those questions' ids, or null") from None


def fit_sets(cfg) -> list[tuple[str, list]]:
    """``dataset.fit_sets``: registered question sets of role dev or train whose questions join the
    calibration set's as questions the agent was not built on, each with its questions ([] when none)."""
    from fedlab.dataset.registry import registered, select_ids
    from fedlab.evaluation.retrieval.harness import load_split

    names = cfg.dataset.get("fit_sets") or []
    if isinstance(names, str):
        names = [names]
    chosen = []
    for name in names:
        registered_set = registered(str(name))
        if registered_set.members:
            raise FedlabError(f"dataset.fit_sets names {name!r}, a pool: name its member sets instead")
        if registered_set.role not in FIT_SET_ROLES:
            raise FedlabError(f"dataset.fit_sets names {name!r}, a {registered_set.role} set: fit only on dev or "
                              "train sets (heldout and test sets confirm a fit, they never make one)")
        questions = select_ids(load_split(registered_set.path, registered_set.split), registered_set.ids,
                               registered_set.path)
        chosen.append((registered_set.name, questions))
    return chosen


def fitting_questions(cfg) -> tuple[list, list[str]]:
    """The split's questions, then the calibration set's and each of ``dataset.fit_sets``', and
    where each comes from (the split's name, CALIBRATION_SET or the fit set's name)."""
    from fedlab.evaluation.retrieval.harness import load_split

    questions = list(load_split(cfg.dataset.path, cfg.dataset.split))
    sources = [str(cfg.dataset.split)] * len(questions)
    extra = calibration_set(cfg)
    questions += extra
    sources += [CALIBRATION_SET] * len(extra)
    for name, chosen in fit_sets(cfg):
        questions += chosen
        sources += [name] * len(chosen)
    clash = sorted(qid for qid, n in Counter(q.id for q in questions).items() if n > 1)
    if clash:
        raise FedlabError(f"the fitting questions reuse ids ({', '.join(clash[:3])}…) across "
                          "dataset.path, dataset.calibration_path and dataset.fit_sets: give each question its own id")
    return questions, sources


@dataclass
class Collected:
    """The split (and the calibration set) answered by the unmodelled agent, and the rows the model is fitted on."""

    questions: list
    sources: list[str]  # per question: the split's name, CALIBRATION_SET or a fit set's name
    pipeline: object
    vocabulary: object  # fedlab.agent.evidence.Vocabulary
    agent: object  # the unmodelled fedlab.agent.program.AgentProgram
    rows: list  # fedlab.agent.answerability_fit.Row, one per question the agent searched
    row_question: list[int]  # the index in ``questions`` of each row's question


def collect_rows(cfg, console: Console) -> Collected:
    """Answer every question of ``cfg``'s split with no model and record each searched one's
    features and outcome (a question answered with the coverage is decided before any evidence:
    not the model's to learn)."""
    from fedlab.agent.answerability_fit import Row
    from fedlab.agent.build import build_agent
    from fedlab.agent.evidence import Vocabulary
    from fedlab.agent.searcher import open_direct
    from fedlab.evaluation.answers.harness import run_agent
    from fedlab.evaluation.answers.measures import judge_answer
    from fedlab.pipeline import build_pipeline

    questions, sources = fitting_questions(cfg)
    split_source = str(cfg.dataset.split)
    hard = hard_sampled(cfg)
    pipeline = build_pipeline(cfg, progress=True)  # what a cold cache builds, shown on stderr
    vocabulary = Vocabulary.from_chunks(pipeline.chunks)
    # read by the question heads alone, which need the question's embedding
    rewordings = calibration_rewordings(cfg) if pipeline.question_side is not None else {}
    agent = build_agent(cfg, search=open_direct(cfg, pipeline))
    agent.model, agent.vocabulary = None, vocabulary  # unmodelled: answer from the first search, record features
    answers = run_agent(agent, questions, progress=True, console=console)
    rows, row_question = [], []
    for i, (q, a) in enumerate(zip(questions, answers)):
        if a.abstain_reason in FACT_ABSTENTIONS:  # facts about the question, not judgements to fit
            continue
        judged = judge_answer(q, a, (), {})
        outcome = "correct" if judged.answer_correct else "wrong" if q.answerable else "unanswerable"
        vector = pipeline.question_vector(agent.read(q.question))  # what the agent embeds
        reworded = [pipeline.question_vector(agent.read(text)).tolist() for text in rewordings.get(q.id, ())]
        rows.append(Row(dict(a.signals), outcome, q.category == "off_topic",
                        vector.tolist() if vector is not None else None, fresh=sources[i] != split_source,
                        hard=sources[i] == CALIBRATION_SET and hard is not None and bool(hard.match(q.id)),
                        rewordings=reworded))
        row_question.append(i)
    return Collected(questions, sources, pipeline, vocabulary, agent, rows, row_question)


def question_folds(categories: Sequence[str], seed: int) -> list[int]:
    """The fold (0..FOLDS-1) of each row, stratified by its question's category (any label: the
    calibration set's questions are told apart by theirs) — not by the agent's
    outcome: two versions of the agent then answer each question from models fitted on the same
    other questions, a paired comparison (folds drawn on the outcomes move most questions when two
    answers change, and the figures with them)."""
    import numpy as np
    from sklearn.model_selection import StratifiedKFold

    from fedlab.agent.answerability_fit import FOLDS

    fold = [0] * len(categories)
    for k, (_, held) in enumerate(StratifiedKFold(FOLDS, shuffle=True, random_state=seed).split(
            np.zeros((len(categories), 1)), list(categories))):
        for i in held:
            fold[i] = k
    return fold


@dataclass
class CrossFit:
    outcome: object  # fedlab.evaluation.answers.harness.AgentOutcome over every question
    by_source: dict[str, tuple[int, dict[str, float]]]  # with a calibration set, per source: its count and measures


def cross_fit(cfg, target_precision: float | None = None, max_false_abstention: float | None = None,
              console: Console | None = None, seed: int = 0) -> CrossFit:
    """The modelled agent measured on ``cfg``'s split with every question answered by a model
    fitted without it (5 folds of the rows, stratified by question category; the threshold chosen within each
    training part for the targets): the split's figures as they are on unseen questions, what
    settings are chosen by. The fitted model's own split flatters it. Writes nothing; returns
    the measures over every question and over each source's (the split's, the calibration set's)."""
    from fedlab.agent.answerability_fit import FOLDS, fit_model
    from fedlab.evaluation.answers.harness import evaluate_answers
    from fedlab.evaluation.answers.measures import summarize
    from fedlab.progress import progress

    console = console or Console(stderr=True)
    target, budget = threshold_targets(cfg, target_precision, max_false_abstention)
    withheld = withheld_target(cfg)
    c = collect_rows(cfg, console)
    folds = question_folds([f"{c.sources[qi]}:{c.questions[qi].category}" for qi in c.row_question], seed)
    # question index -> fold; a question with no row is answered with the coverage, whatever the fold
    fold_of = {qi: k for qi, k in zip(c.row_question, folds)}
    agent, answers = c.agent, [None] * len(c.questions)
    agent.settings.answerability["threshold"] = None  # each fold's model's own
    agent.settings.answerability["answer_threshold"] = None
    with progress("cross-fitted answering", len(c.questions), "questions", True, console=console) as advance:
        for k in range(FOLDS):
            train = [r for r, qi in zip(c.rows, c.row_question) if fold_of[qi] != k]
            agent.model = fit_model(train, c.vocabulary, target, float(agent.settings.off_topic_threshold),
                                    max_false_abstention=budget, max_withheld_correct=withheld,
                                    correctness_from=correctness_from(cfg))
            for qi, q in enumerate(c.questions):
                if fold_of.get(qi, 0) == k:
                    answers[qi] = agent(q.question)
                    advance()
    outcome = evaluate_answers(c.questions, answers, c.pipeline)
    by_source = {}
    if len(set(c.sources)) > 1:  # one source: its measures are the whole's
        for source in dict.fromkeys(c.sources):
            idx = [i for i, s in enumerate(c.sources) if s == source]
            by_source[source] = (len(idx), summarize([outcome.results[i] for i in idx], [answers[i] for i in idx]))
    return CrossFit(outcome, by_source)


def default_out(cfg) -> Path:
    from fedlab.config import CONF_DIR

    lm = cfg.lm._target_.rsplit(".", 1)[-1].removesuffix("Backend").lower()
    return CONF_DIR / "calibration" / f"{lm}-{cfg.retriever.kind}.json"


def calibrate(cfg, out: str | Path | None = None, target_precision: float | None = None, config_name: str = "",
              overrides: Sequence[str] = (), console: Console | None = None,
              method: str = "logistic", max_false_abstention: float | None = None) -> CalibrationResult:
    """Collect the rows on ``cfg`` (composed with the agent, ``agent.calibration=null``), fit, write.

    ``target_precision`` defaults to ``agent.answerability.target_precision`` and
    ``max_false_abstention`` to ``agent.answerability.max_false_abstention``; ``config_name`` and
    ``overrides`` (what ``cfg`` was composed from) are recorded in the model's provenance.
    ``method``: logistic-regression heads ("platt" is the name earlier versions used for them).
    """
    if method not in METHODS:
        raise FedlabError(f"calibration method {method!r}: choose one of {', '.join(METHODS)}")
    from fedlab.agent.answerability_fit import fit_model
    from fedlab.agent.fingerprint import fingerprint
    from fedlab.evaluation.retrieval.harness import dataset_hash

    console = console or Console(stderr=True)
    target, budget = threshold_targets(cfg, target_precision, max_false_abstention)
    withheld = withheld_target(cfg)
    c = collect_rows(cfg, console)
    n_extra = sum(s == CALIBRATION_SET for s in c.sources)
    fitted_sets = {name: sum(s == name for s in c.sources) for name, _ in fit_sets(cfg)}
    meta = {"split": cfg.dataset.split, "dataset_hash": dataset_hash(cfg.dataset.path),
            "corpus_hash": c.pipeline.corpus.content_hash,
            "lm": cfg.lm._target_, "retriever": cfg.retriever.kind, "config": config_name, "sets": list(overrides),
            "method": "logistic",  # every name in METHODS fits the same heads
            "fingerprint": fingerprint(cfg)}  # what produced the features (fedlab.agent.fingerprint)
    if n_extra:
        meta["calibration_set"] = {"path": Path(cfg.dataset.calibration_path).name, "n": n_extra,
                                   "hash": dataset_hash(cfg.dataset.calibration_path)}
    if fitted_sets:
        from fedlab.dataset.registry import registered

        meta["fit_sets"] = {name: {"n": n, "hash": dataset_hash(registered(name).path)} for name, n in fitted_sets.items()}
    embedder = c.pipeline.question_side
    if embedder is not None:  # the question head reads this embedder's vectors
        meta.update(embedder=cfg.embedder.name, embedder_fingerprint=embedder.fingerprint())
        if cfg.dataset.get("calibration_rewordings_path"):
            meta["calibration_rewordings"] = {"path": Path(cfg.dataset.calibration_rewordings_path).name,
                                              "hash": dataset_hash(cfg.dataset.calibration_rewordings_path)}
    model = fit_model(c.rows, c.vocabulary, target, float(c.agent.settings.off_topic_threshold), meta=meta,
                      max_false_abstention=budget, max_withheld_correct=withheld,
                      correctness_from=correctness_from(cfg))
    path = Path(out) if out else default_out(cfg)
    model.save(path)
    return CalibrationResult(model, path, cfg.dataset.split, len(c.questions), len(c.rows),
                             sum(r.outcome == "correct" for r in c.rows), n_extra, target, budget, withheld)
