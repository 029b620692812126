"""Judges label sentences in RAGBench's schema: an LLM judge and a local learned judge."""
