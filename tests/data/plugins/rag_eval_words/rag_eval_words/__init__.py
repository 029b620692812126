"""Example rag-eval plugin (tests only): a metric and a judge kind."""
