"""Claude through ``dspy.LM("anthropic/<model>")`` (DSPy's own client; honours ANTHROPIC_BASE_URL).

The key is read from the environment by the client, never passed, stored or logged here; error
text is redacted before it reaches the user.
"""
from __future__ import annotations

import os

from fedlab.lm.base import DspyBackend, LMUnavailable


class AnthropicBackend(DspyBackend):
    name = "anthropic"

    def __init__(self, model: str, max_tokens: int = 1024, temperature: float = 0.0, timeout_s: float = 30.0,
                 max_retries: int = 2, cache: bool = False, key_env: str = "ANTHROPIC_API_KEY",
                 predictor: str = "predict", price_per_mtok_in: float = 0.0, price_per_mtok_out: float = 0.0):
        if not os.environ.get(key_env, "").strip():
            raise LMUnavailable(f"lm=anthropic needs an API key in ${key_env}: export it, "
                                "or answer offline with --set lm=extractive")
        import dspy

        lm = dspy.LM(f"anthropic/{model}", max_tokens=int(max_tokens), temperature=float(temperature),
                     timeout=float(timeout_s), num_retries=int(max_retries), cache=bool(cache))
        super().__init__(lm, predictor=predictor, price_per_mtok_in=price_per_mtok_in,
                         price_per_mtok_out=price_per_mtok_out)
        self.model = model

    def __repr__(self) -> str:
        return f"AnthropicBackend(model={self.model!r})"
