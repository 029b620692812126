"""Trace importers: a traced RAG application's spans (Phoenix, OTLP JSON, Phoenix parquet,
TruLens) as judge-ready rows, and judged scores written back as Phoenix span annotations.

A room of importers: it reads spans and writes rows (``rag_eval.io``), and never imports the
judges, runs, UI or CLI; the CLI wires it to the run store. The mapping is
:mod:`rag_eval.traces.mapping`; docs/traces.md describes it for users.
"""
