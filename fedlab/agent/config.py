"""Composing a config with the agent switched on (ask, calibration): agent=default lm=extractive
unless the config or the user chooses otherwise."""
from __future__ import annotations

from pathlib import Path

DEFAULT_GROUPS = {"agent": "default", "lm": "extractive"}


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
