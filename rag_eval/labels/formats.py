"""The file formats label sets are exported to and imported from.

A module of its own so the command line can offer the choices without importing the
run store (``rag-eval labels export --help`` starts at once).
"""

FORMATS = ("ragbench-parquet", "jsonl")
