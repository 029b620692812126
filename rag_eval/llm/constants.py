"""Named tunables of the LLM client, in one place so they are easy to find and change."""

from __future__ import annotations

DEFAULT_MODEL = "gpt-4o-mini"
OPENAI_URL = "https://api.openai.com/v1"  # the provider's own endpoint (no base_url), spelled out
DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"
DEFAULT_CONCURRENCY = 16
DEFAULT_MAX_RETRIES = 4
DEFAULT_TIMEOUT_S = 60.0
DEFAULT_TEMPERATURE = 0.0
DEFAULT_MAX_TOKENS = 2048

# Backoff: INITIAL * 2**attempt, capped, minus up to JITTER of itself.
INITIAL_RETRY_DELAY_S = 0.5
MAX_RETRY_DELAY_S = 20.0
RETRY_JITTER = 0.25
# A Retry-After longer than this is not honoured as given (we back off normally instead).
RETRY_AFTER_CAP_S = 60.0

# 408 request timeout, 409 lock conflict, 429 rate limited, 5xx server side.
RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})

# Adaptive limiter: the allowed rate (and concurrency) is multiplied by a factor in
# [MIN_RATE_FACTOR, 1]; halved on 429, raised by RECOVERY_STEP per success.
MIN_RATE_FACTOR = 1 / 64
RECOVERY_STEP = 1 / 32

# Local servers (Ollama, vLLM, llama.cpp...) need no key, but the openai package
# insists on one; this placeholder is sent instead.
NO_KEY_PLACEHOLDER = "not-needed"

# Rough token estimate for budgeting and dry runs (about 4 characters per token in
# English for GPT-style tokenizers); actual counts come from the provider's usage.
CHARS_PER_TOKEN = 4.0
