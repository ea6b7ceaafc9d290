"""``faithfulness``: ragas' Faithfulness (collections API, ragas 0.4) judged by an LLM.

Contract and design notes: docs/metrics.md#design-notes-fedlabevaluationanswersfaithfulnesspy.
"""
from __future__ import annotations

import asyncio
import logging
import math
import os
from typing import Any, Mapping, Sequence

from ragas.llms.base import InstructorBaseRagasLLM
from ragas.metrics.collections import Faithfulness

from fedlab.agent.types import AgentAnswer
from fedlab.errors import FedlabError
from fedlab.evaluation.answers.normalize import strip_markers

log = logging.getLogger(__name__)


def build_judge(cfg: Mapping[str, Any] | str | None):
    """The ragas LLM for ``eval.judge``, or None (with a warning) when it cannot be used."""
    if not cfg:
        return None
    if isinstance(cfg, str) or cfg.get("lm"):
        return LMJudge(judge_backend(cfg))
    provider = str(cfg.get("provider") or cfg.get("kind") or "anthropic").lower()
    model = str(cfg.get("model") or "")
    if provider != "anthropic" or not model:
        raise FedlabError(f"eval.judge: provider {provider!r} with model {model!r} is not supported; "
                          "use provider: anthropic and a model name, or eval.judge=null")
    key_env = str(cfg.get("api_key_env") or "ANTHROPIC_API_KEY")
    api_key = os.environ.get(key_env)
    if not api_key:
        log.warning("eval.judge: %s is not set; faithfulness is not measured", key_env)
        return None
    from anthropic import AsyncAnthropic

    client = AsyncAnthropic(api_key=api_key, base_url=cfg.get("base_url") or None,
                            timeout=float(cfg.get("timeout_s") or 60), max_retries=1)
    return AnthropicJudge(client, model.removeprefix("anthropic/"), int(cfg.get("max_tokens") or 2048))


JUDGE_KEYS = ("concurrency",)  # eval.judge's own keys, not the backend's


def judge_backend(cfg: Mapping[str, Any] | str):
    """The backend ``eval.judge`` names (conf/lm/<name>.yaml, with the mapping's settings over it)."""
    from fedlab.config import check_targets, group_configs, instantiate_group

    name = cfg if isinstance(cfg, str) else str(cfg.get("lm"))
    known = group_configs("lm")
    if name not in known or not known[name].get("_target_", "").startswith("fedlab.lm.") or name in ("extractive", "local"):
        usable = ", ".join(n for n in known if n not in ("extractive", "local"))
        raise FedlabError(f"eval.judge={name}: a judge is a language-model backend of conf/lm/ ({usable}), "
                          "or eval.judge=null")
    settings = dict(known[name])
    if not isinstance(cfg, str):
        settings.update({k: v for k, v in dict(cfg).items() if k not in ("lm", *JUDGE_KEYS)})
    check_targets({"lm": settings}, "eval.judge")
    return instantiate_group(settings, "eval.judge")


class LMJudge(InstructorBaseRagasLLM):
    """ragas structured generation through a fedlab language-model backend (fedlab.lm.base.DspyBackend):
    the prompt in, ragas' response model out as a typed DSPy output field (DSPy's adapter parses it)."""

    def __init__(self, backend):
        self.backend = backend

    @property
    def usage(self) -> dict[str, int]:
        return self.backend.usage_since(0)

    def generate(self, prompt, response_model):
        import dspy

        signature = dspy.Signature({"prompt": (str, dspy.InputField()),
                                    "response": (response_model, dspy.OutputField())},
                                   "Follow the prompt; give the response in the structure asked for.")
        with self.backend.context():
            return dspy.Predict(signature)(prompt=str(prompt)).response

    async def agenerate(self, prompt, response_model):
        return await asyncio.to_thread(self.generate, prompt, response_model)


class AnthropicJudge(InstructorBaseRagasLLM):
    """ragas structured generation through the Anthropic Messages API (a forced tool call)."""

    def __init__(self, client, model: str, max_tokens: int = 2048):
        self.client = client
        self.model = model
        self.max_tokens = max_tokens
        self.usage = {"prompt_tokens": 0, "completion_tokens": 0}

    def generate(self, prompt, response_model):
        return asyncio.run(self.agenerate(prompt, response_model))

    async def agenerate(self, prompt, response_model):
        tool = {"name": "respond", "description": "Return the answer in this structure.",
                "input_schema": response_model.model_json_schema()}
        msg = await self.client.messages.create(
            model=self.model, max_tokens=self.max_tokens, messages=[{"role": "user", "content": str(prompt)}],
            tools=[tool], tool_choice={"type": "tool", "name": "respond"})
        usage = getattr(msg, "usage", None)
        if usage is not None:
            self.usage["prompt_tokens"] += int(getattr(usage, "input_tokens", 0) or 0)
            self.usage["completion_tokens"] += int(getattr(usage, "output_tokens", 0) or 0)
        for block in msg.content:
            if getattr(block, "type", None) == "tool_use":
                return response_model.model_validate(block.input)
        text = "".join(getattr(b, "text", "") for b in msg.content)
        return response_model.model_validate_json(text[text.find("{"): text.rfind("}") + 1])


def _sample(question: str, answer: AgentAnswer) -> dict | None:
    if answer.abstained or not answer.citations or not strip_markers(answer.answer).strip():
        return None
    return {"user_input": question, "response": strip_markers(answer.answer).strip(),
            "retrieved_contexts": [c.text for c in answer.citations]}


async def _score_all(metric, samples: list[tuple[str, dict]], concurrency: int) -> dict[str, float]:
    gate = asyncio.Semaphore(max(concurrency, 1))

    async def one(qid: str, sample: dict) -> tuple[str, float]:
        async with gate:
            try:
                return qid, float((await metric.ascore(**sample)).value)
            except Exception as exc:  # one failed judgement must not sink the run
                log.warning("faithfulness of %s not judged: %s", qid, exc)
                return qid, math.nan

    scored = await asyncio.gather(*(one(qid, s) for qid, s in samples))
    return {qid: v for qid, v in scored if not math.isnan(v)}


def judge_faithfulness(llm, items: Sequence[tuple[str, str, AgentAnswer]], concurrency: int = 4) -> dict[str, float] | None:
    """{question id: faithfulness} for ``items`` = (id, question, answer); None when the judge
    is unreachable (the first judgement fails to connect or authenticate)."""
    metric = Faithfulness(llm=llm)
    samples = [(qid, s) for qid, q, a in items if (s := _sample(q, a)) is not None]
    if not samples:
        return {}
    first_id, first = samples[0]
    try:
        first_value = float(asyncio.run(metric.ascore(**first)).value)
    except Exception as exc:
        if _unreachable(exc):
            log.warning("eval.judge is not reachable (%s); faithfulness is not measured", exc)
            return None
        log.warning("faithfulness of %s not judged: %s", first_id, exc)
        first_value = math.nan
    out = asyncio.run(_score_all(metric, samples[1:], concurrency))
    if not math.isnan(first_value):
        out[first_id] = first_value
    return out


def _unreachable(exc: BaseException) -> bool:
    from fedlab.lm.base import LMUnavailable

    try:
        import anthropic
    except ImportError:
        anthropic = None
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, LMUnavailable):  # a backend's one line: its server did not answer, or refused
            return True
        if anthropic is not None and isinstance(seen, (anthropic.APIConnectionError, anthropic.AuthenticationError,
                             anthropic.PermissionDeniedError, anthropic.NotFoundError, OSError)):
            return True
        seen = seen.__cause__ or seen.__context__
    return False
