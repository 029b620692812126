"""An OpenAI-compatible LLM client: bounded concurrency, adaptive rate limiting,
retries with backoff, a content-addressed cache, and token/cost accounting.

Any endpoint that speaks ``/v1/chat/completions`` works by ``base_url``: OpenAI, Groq,
Together, OpenRouter, Azure OpenAI (v1 API), Ollama, vLLM, LM Studio, llama.cpp server.
"""
