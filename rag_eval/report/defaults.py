"""Defaults of the HTML report that the command line shows in its help.

Kept apart from :mod:`rag_eval.report.html` so ``rag-eval report --help`` does not
import the report's metrics and the run store.
"""

DEFAULT_WORST = 5  # support maps of this many lowest-scoring (and failed) rows per run
