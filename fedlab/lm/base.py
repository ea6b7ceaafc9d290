"""What every backend offers the agent, and the one-line failure it raises."""
from __future__ import annotations

import contextlib
import os
import re
from typing import Iterator

from fedlab.errors import FedlabError

_KEY_LIKE = re.compile(r"sk-[A-Za-z0-9_\-]{6,}")
SECRET_ENV = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")


class LMUnavailable(FedlabError):
    """The configured backend cannot answer (missing key, unreachable, extra not installed)."""


def redact(text: str, key_envs: tuple[str, ...] = ()) -> str:
    """``text`` with API keys masked: the values of SECRET_ENV and of ``key_envs`` (names of
    environment variables a backend reads its key from), and anything shaped like a key."""
    for name in (*SECRET_ENV, *key_envs):
        value = os.environ.get(name)
        if value and len(value) >= 4:
            text = text.replace(value, "[redacted]")
    return _KEY_LIKE.sub("sk-[redacted]", text)


def one_line(exc: BaseException, limit: int = 300, key_envs: tuple[str, ...] = ()) -> str:
    """``exc``'s message on one line, clipped to ``limit`` characters, keys redacted."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return redact(text[:limit], key_envs)


class DspyBackend:
    """A backend whose predictors are the steps' of one ``program`` (fedlab.lm.module.AgentModule:
    ``dspy.Predict`` or ``dspy.ChainOfThought`` per ``predictor``), run under its own ``dspy.LM``.

    ``context()`` scopes the LM to one agent call (never ``dspy.configure``: several agents may
    live in one process) and turns DSPy's LM errors, and a reply no adapter could parse, into one
    redacted line (``failure``). ``load_program(path)`` loads a compiled program's state
    (``python -m fedlab.optimize``) into it. ``price_per_mtok_in/out`` (currency units per million
    tokens; 0 for a server of one's own) price the tokens counted per question.
    """

    name = "dspy"
    is_language_model = True
    key_envs: tuple[str, ...] = ()  # environment variables holding this backend's key: redacted too

    def __init__(self, lm, adapter=None, predictor: str = "predict", price_per_mtok_in: float = 0.0,
                 price_per_mtok_out: float = 0.0):
        self.lm = lm
        self.adapter = adapter
        self.predictor_kind = str(predictor)
        self.prices = (float(price_per_mtok_in or 0.0), float(price_per_mtok_out or 0.0))
        self._program = None

    @property
    def program(self):
        """The DSPy program (fedlab.lm.module.AgentModule) that owns this backend's predictors."""
        if self._program is None:
            from fedlab.lm.module import AgentModule

            self._program = AgentModule(self.predictor_kind)
        return self._program

    def predictor(self, step):
        """The program's predictor of the step (a fedlab.lm.steps.Step or a signature class)."""
        return self.program.step(step)

    def load_program(self, path) -> None:
        """Load a compiled program (``python -m fedlab.optimize``) into ``program``; a missing,
        unreadable or mismatched file is one FedlabError line naming the fix."""
        from fedlab.lm.program_file import load_into

        load_into(self.program, path)

    @contextlib.contextmanager
    def context(self) -> Iterator[None]:
        import dspy
        from dspy.utils.exceptions import AdapterParseError, LMError

        settings = {"lm": self.lm} if self.adapter is None else {"lm": self.lm, "adapter": self.adapter}
        try:
            with dspy.context(**settings):
                yield
        except LMError as exc:
            raise LMUnavailable(self.failure(exc)) from None
        except AdapterParseError as exc:
            raise LMUnavailable(f"lm={self.name}: the model's reply is not in the format the step asks for "
                                f"({one_line(exc, 160, self.key_envs)})") from None

    def failure(self, exc: BaseException) -> str:
        """The one line an LM error becomes (keys redacted)."""
        return f"lm={self.name} failed: {one_line(exc, key_envs=self.key_envs)}"

    def usage_mark(self) -> int:
        return len(self.lm.history)

    def usage_since(self, mark: int) -> dict[str, int]:
        totals = {"prompt_tokens": 0, "completion_tokens": 0}
        for entry in self.lm.history[mark:]:
            usage = entry.get("usage") or {}
            for key in totals:
                totals[key] += int(usage.get(key) or 0)
        return totals

    def usage_cost(self, usage: dict) -> float:
        """What ``usage`` (prompt_tokens, completion_tokens) costs at this backend's prices."""
        return cost_of(usage, self.prices)

    def describe(self) -> str:
        return f"{self.name} ({self.lm.model})"


def cost_of(usage: dict, prices: tuple[float, float]) -> float:
    """The cost of ``usage`` at (price per million prompt tokens, per million completion tokens)."""
    return (int(usage.get("prompt_tokens") or 0) * prices[0]
            + int(usage.get("completion_tokens") or 0) * prices[1]) / 1e6
