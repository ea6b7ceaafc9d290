"""The registry of question sets: every ``conf/dataset/<name>.yaml`` with its ``role``.

A role says what a set may be used for (docs/datasets-and-protocol.md):

- ``dev``      develop and choose on it (its answers are read);
- ``heldout``  read only to confirm a choice already made on dev, never to choose;
- ``test``     read for a release, never to choose (every read is counted);
- ``train``    what a model is fitted on (the answerability model's calibration set): its
               figures are in-sample, so the report leaves it out unless asked.

A set's role follows its file: ``role: ${dataset_role:dev}`` in a registered config is ``dev``
while ``dataset.path`` is that config's own file and ``heldout`` once ``dataset.path=FILE`` points
elsewhere (an explicit ``dataset.role=…`` wins). Questions of the schema's ``test`` split are
always read as ``test`` (``effective_role``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from fedlab.config import DATASET_ROLES as ROLES
from fedlab.errors import FedlabError

DEFAULT_REPORT_ROLES = ("dev", "heldout")
_ROOT_VAR = re.compile(r"\$\{paths\.root_dir\}")


@dataclass(frozen=True)
class RegisteredSet:
    name: str  # the config's name: dataset=<name>
    path: Path  # the JSONL file, absolute
    split: str  # dev | test | all (the schema's split field to read)
    role: str  # one of ROLES
    ids: str | None = None  # a regular expression matched at an id's start: only those questions
    description: str = ""
    members: tuple[str, ...] = ()  # a pool: the registered sets it joins (no file of its own)


def dataset_conf_dir() -> Path:
    from fedlab.config import CONF_DIR

    return CONF_DIR / "dataset"


def _registered_role(value) -> str | None:
    """The role a config's ``role:`` entry names: ``${dataset_role:dev}`` or a plain ``dev``."""
    if not isinstance(value, str):
        return None
    found = re.fullmatch(r"\$\{dataset_role:\s*(\w+)\s*\}", value.strip())
    return found.group(1) if found else value.strip()


def _load(path: Path) -> RegisteredSet:
    import yaml

    from fedlab.config import project_root

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise FedlabError(f"dataset config {path} cannot be read ({type(exc).__name__}): fix the file") from None
    role = _registered_role(data.get("role"))
    if role not in ROLES:
        raise FedlabError(f"dataset config {path} has role {data.get('role')!r}: give it one of {', '.join(ROLES)}")
    if data.get("members"):  # a pool of registered sets (the reader study's), not a set of its own
        return RegisteredSet(name=str(data.get("name") or path.stem), path=Path(), split="all", role=role,
                             description=str(data.get("description") or ""), members=tuple(data["members"]))
    raw = str(data.get("path") or "")
    if not raw:
        raise FedlabError(f"dataset config {path} names no path: set `path:` to its JSONL file")
    file = Path(_ROOT_VAR.sub(lambda _: project_root(), raw))
    if not file.is_absolute():
        file = Path(project_root()) / file
    return RegisteredSet(name=str(data.get("name") or path.stem), path=file, split=str(data.get("split") or "all"),
                         role=role, ids=data.get("ids") or None, description=str(data.get("description") or ""))


def registered_sets(roles: tuple[str, ...] | list[str] | None = None) -> list[RegisteredSet]:
    """The registered sets (all, or those of ``roles``), in name order; pools are not sets."""
    sets = [s for s in (_load(p) for p in sorted(dataset_conf_dir().glob("*.yaml"))) if not s.members]
    return [s for s in sets if roles is None or s.role in roles]


def registered(name: str) -> RegisteredSet:
    """The set ``dataset=<name>`` selects; one line naming the registered ones when there is none."""
    path = dataset_conf_dir() / f"{name}.yaml"
    if not path.is_file():
        names = ", ".join(s.name for s in registered_sets())
        raise FedlabError(f"no registered question set {name!r}: use one of {names}, or --set-file PATH")
    return _load(path)


def effective_role(role: str | None, questions) -> str:
    """The role an evaluation of ``questions`` reads as: ``test`` when any question is of the
    schema's test split, else ``role`` (``heldout`` when none is given)."""
    if any(getattr(q, "split", None) == "test" for q in questions):
        return "test"
    return role if role in ROLES else "heldout"


def select_ids(questions: list, pattern: str | None, path) -> list:
    """The questions whose id starts with a match of ``pattern`` (``dataset.ids``); all when None."""
    if not pattern:
        return questions
    try:
        rx = re.compile(pattern)
    except re.error as exc:
        raise FedlabError(f"dataset.ids={pattern!r} is not a regular expression ({exc}): fix it") from None
    chosen = [q for q in questions if rx.match(q.id)]
    if not chosen:
        raise FedlabError(f"{path} has no question whose id matches dataset.ids={pattern!r}: fix the pattern")
    return chosen
