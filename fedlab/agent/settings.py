"""The agent's settings (``cfg.agent``, conf/agent/default.yaml) and composing a config with the
agent switched on (ask, calibration): agent=default lm=extractive unless the config or the user
chooses otherwise."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from fedlab.agent.confidence import DEFAULT_THRESHOLDS, DEFAULT_WEIGHTS, check_thresholds
from fedlab.agent.evidence import ZIPF_FLOOR
from fedlab.errors import FedlabError

DEFAULT_GROUPS = {"agent": "default", "lm": "extractive"}
ORDERINGS = ("rank", "lost_in_the_middle")


@dataclass
class AgentSettings:
    """conf/agent/default.yaml. ``transport`` is read when the searcher is opened."""

    transport: str = "direct"
    top_k: int | None = None  # base k for a search; None = the retriever's top_k
    max_context: int = 8  # passages handed to synthesize_answer
    ordering: str = "rank"  # rank | lost_in_the_middle
    max_reformulations: int = 2
    thresholds: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_THRESHOLDS))
    weights: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    signal_top_n: int = 5
    bm25_half: float = 10.0  # BM25 score mapped to 0.5 by the top_score signal
    calibration: str | None = None  # the answerability model (fedlab.agent.answerability); None: unmodelled
    answerability: dict = field(default_factory=dict)  # thresholds (None: the model's), the targets they were fitted for
    off_topic_threshold: float = 0.5  # P(off topic) at or above which the question is off topic
    decision_passages: bool = True  # multi-meeting questions also get each meeting's decision sentence; rate notes any dated one
    change_passages: int = 8  # ... and each statement's changed sentences, when the range holds at most this many changes
    meeting_changes: bool = True  # a question about one meeting gets what its statement changed from the previous one
    named_doc_type: bool = True  # a question naming one document type ("the March 2019 minutes") gets its passages first
    marked_doc_type: bool = True  # ... and one spanning several meetings whose words mark one ("participants": minutes)
    glossary: bool = True  # the extractive reader matches the corpus's abbreviations both ways ("IOER")
    shorthand: bool = True  # the question is read with its shorthand in the documents' words ("dec 2023", "QT")
    rare_word_zipf: float | None = None  # a word no passage uses counts as unknown only below this English Zipf frequency
    statement_runs: bool = True  # a question asking when something was said gets the first and last statements saying it
    vote_passages: int = 12  # questions about votes get the vote record of each meeting in range, up to this many; 0 = never
    recorded_dissents: bool = True  # a vote question naming a dissenter the timeline records in range is answerable
    quoted_wording: bool = True  # a question asking when the statements said wording it quotes, which one holds, is answerable
    balance_sheet_passages: int = 12  # questions about the balance sheet get each action in range, up to this many; 0 = never
    today: str | None = None  # ISO date ending open ranges; None = the retriever's corpus_end, else today
    program: str | None = None  # a compiled DSPy program (python -m fedlab.optimize) loaded into an LM backend

    def __post_init__(self):
        self.thresholds = check_thresholds(dict(self.thresholds))
        self.weights = {k: float(v) for k, v in dict(self.weights).items()}
        self.answerability = dict(self.answerability or {})
        if self.ordering not in ORDERINGS:
            raise FedlabError(f"agent.ordering={self.ordering!r}: choose one of {', '.join(ORDERINGS)}")
        if int(self.max_reformulations) < 0 or int(self.max_context) < 1 or int(self.change_passages) < 0 \
                or int(self.vote_passages) < 0 or int(self.balance_sheet_passages) < 0:
            raise FedlabError("agent.max_reformulations, agent.change_passages, agent.vote_passages and "
                              "agent.balance_sheet_passages must be >= 0 and "
                              "agent.max_context >= 1")
        if self.rare_word_zipf is not None and not ZIPF_FLOOR <= float(self.rare_word_zipf) <= 8.0:
            raise FedlabError(f"agent.rare_word_zipf={self.rare_word_zipf} must be a Zipf frequency in "
                              f"[{ZIPF_FLOOR:g}, 8] (wordfreq's small list) or null")
        for name, value in (("agent.answerability.threshold", self.answerability.get("threshold")),
                            ("agent.answerability.answer_threshold", self.answerability.get("answer_threshold")),
                            ("agent.off_topic_threshold", self.off_topic_threshold)):
            if value is not None and not 0.0 <= float(value) <= 1.0:
                raise FedlabError(f"{name}={value} must be a probability in [0, 1]")


def listed_groups(config: str) -> dict[str, str | None]:
    """Group -> choice named in the config file's defaults list (read as YAML; null = off)."""
    import yaml

    from fedlab.config import CONF_DIR

    path = Path(config) if Path(config).suffix in (".yaml", ".yml") else CONF_DIR / f"{config}.yaml"
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, ValueError, yaml.YAMLError):  # ValueError: not UTF-8; compose() names the problem
        return {}
    if not isinstance(data, dict) or not isinstance(data.get("defaults"), (list, type(None))):
        return {}
    groups: dict[str, str | None] = {}
    for entry in data.get("defaults", []) or []:
        if isinstance(entry, dict):
            for key, value in entry.items():
                groups[str(key).removeprefix("override ").split("@")[0].strip()] = value
    return groups


def group_overrides(listed: dict[str, str | None], sets: list[str]) -> list[str]:
    """``sets`` with the agent and lm groups switched on: the user's choice, else DEFAULT_GROUPS.

    A group the config does not list must be added (``+lm=...``); one it lists as null is
    overridden (``lm=...``); each group is named once, as Hydra refuses two values.
    """
    sets = list(sets)
    chosen = {}
    for i, item in enumerate(sets):
        key, _, value = item.partition("=")
        if key.lstrip("+~") in DEFAULT_GROUPS and value:
            chosen[key.lstrip("+~")] = i
    added = []
    for group, choice in DEFAULT_GROUPS.items():
        prefix = "" if group in listed else "+"
        if group in chosen:
            i = chosen[group]
            sets[i] = f"{prefix}{group}={sets[i].partition('=')[2]}"
        elif listed.get(group) is None:
            added.append(f"{prefix}{group}={choice}")
    return added + sets


def compose_with_agent(config: str, sets: list[str]):
    from fedlab.config import compose

    return compose(config, group_overrides(listed_groups(config), sets))
