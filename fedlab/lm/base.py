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
    """A backend whose predictors are ``dspy.Predict(signature)`` run under its own ``dspy.LM``.

    ``context()`` scopes the LM to one agent call (never ``dspy.configure``: several agents may
    live in one process) and turns DSPy's LM errors, and a reply no adapter could parse, into one
    redacted line (``failure``).
    """

    name = "dspy"
    is_language_model = True
    key_envs: tuple[str, ...] = ()  # environment variables holding this backend's key: redacted too

    def __init__(self, lm, adapter=None):
        self.lm = lm
        self.adapter = adapter

    def predictor(self, step):
        """``dspy.Predict`` over the step's signature (a fedlab.lm.steps.Step or a signature class)."""
        import dspy

        from fedlab.lm.signatures import signature_for

        return dspy.Predict(signature_for(step))

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

    def describe(self) -> str:
        return f"{self.name} ({self.lm.model})"
