"""Any OpenAI-compatible chat-completions server — vLLM, Ollama, llama.cpp's server, LM Studio —
through ``dspy.LM("openai/<model>", api_base=...)``.

The key is read from the environment variable the config names (``key_env``), never from the
config; it travels only as the request's ``Authorization: Bearer`` header and is redacted from
every error. With that variable unset a placeholder bearer is sent (a server started without a
key ignores it; one that wants a key refuses it, in one line naming ``key_env``). Each request
has a read timeout and a bounded number of retries; any failure is one LMUnavailable line.
"""
from __future__ import annotations

import os
import re
from urllib.parse import urlsplit

from fedlab.env import mask_credentials
from fedlab.lm.base import DspyBackend, LMUnavailable, redact

NO_KEY = "no-key"  # the bearer sent when key_env is unset: keyless servers ignore it
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def check_api_base(api_base) -> str:
    """``api_base`` without a trailing slash; LMUnavailable (one line) unless it is an http(s) URL."""
    text = str(api_base or "").strip().rstrip("/")
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise LMUnavailable(f"lm.api_base={mask_credentials(text) or 'null'} is not an http(s) URL: set it to the "
                            "server's OpenAI-compatible base, e.g. --set lm.api_base=http://127.0.0.1:8000/v1")
    return text


class OpenAICompatibleBackend(DspyBackend):
    """The agent's signatures answered by ``model`` on the server at ``api_base`` (its ``/v1``
    base: requests go to ``{api_base}/chat/completions``)."""

    name = "openai_compatible"

    def __init__(self, api_base: str, model: str | None, key_env: str = "OPENAI_COMPATIBLE_API_KEY",
                 max_tokens: int = 1024, temperature: float = 0.0, timeout_s: float = 60.0, max_retries: int = 2,
                 cache: bool = False, predictor: str = "predict", price_per_mtok_in: float = 0.0,
                 price_per_mtok_out: float = 0.0):
        self.api_base = check_api_base(api_base)
        if not str(model or "").strip():
            raise LMUnavailable("lm=openai_compatible needs lm.model, the name the server serves "
                                f"(GET {mask_credentials(self.api_base)}/models lists them): --set lm.model=NAME")
        if not _ENV_NAME.fullmatch(str(key_env or "")):
            raise LMUnavailable("lm.key_env names the environment variable that holds the key "
                                "(e.g. OPENAI_COMPATIBLE_API_KEY), never the key itself")
        self.model = str(model).strip()
        self.key_env = str(key_env)
        self.key_envs = (self.key_env,)
        self.timeout_s = float(timeout_s)
        key = os.environ.get(self.key_env, "").strip()
        self.has_key = bool(key)
        import dspy

        lm = dspy.LM(f"openai/{self.model}", api_base=self.api_base, api_key=key or NO_KEY,
                     max_tokens=int(max_tokens), temperature=float(temperature), timeout=self.timeout_s,
                     num_retries=int(max_retries), cache=bool(cache))
        super().__init__(lm, predictor=predictor, price_per_mtok_in=price_per_mtok_in,
                         price_per_mtok_out=price_per_mtok_out)

    def failure(self, exc: BaseException) -> str:
        """One line naming the server and what to do: a refused key, a server that does not
        answer in time (or at all), or the server's own complaint."""
        from dspy.utils.exceptions import LMAuthError, LMTimeoutError, LMTransportError

        where = mask_credentials(self.api_base)
        said = str(exc).split("\n\n", 1)[0]
        said = re.sub(r"^\[[^\]]*\]\s*", "", " ".join(said.split()))  # DSPy's "[openai/<model>] " prefix
        said = redact(said[:200], self.key_envs) or type(exc).__name__
        if isinstance(exc, LMAuthError):
            fix = (f"check the key in ${self.key_env}" if self.has_key
                   else f"the server wants a key: export it as ${self.key_env}")
            return f"lm=openai_compatible: {where} refused the request ({said}): {fix}"
        if isinstance(exc, (LMTimeoutError, LMTransportError)):
            return (f"lm=openai_compatible: no reply from {where} ({said}): is the server running there? "
                    f"(lm.api_base; lm.timeout_s={self.timeout_s:g} for a slow model)")
        return f"lm=openai_compatible failed at {where}: {said}"

    def describe(self) -> str:
        return f"openai_compatible ({self.model} at {mask_credentials(self.api_base)})"

    def __repr__(self) -> str:
        return f"OpenAICompatibleBackend(model={self.model!r}, api_base={mask_credentials(self.api_base)!r})"
