"""Placeholder: the local OpenAI-compatible test server fixture lands with the LLM judge."""
