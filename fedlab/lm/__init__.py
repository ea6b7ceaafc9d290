"""Answer backends for the agent's signatures (the `lm` config group).

extractive: deterministic, offline, no language model; anthropic: Claude through dspy.LM;
openai_compatible: any OpenAI-compatible server (vLLM, Ollama, llama.cpp's server) through dspy.LM;
local: gemma-3-270m (base) through xllamacpp, an optional extra.
"""
