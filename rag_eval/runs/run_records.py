"""What both kinds of run (RAG pipeline, judge-only) record the same way: the
dataset's fingerprint and the status an exception leaves.

A module apart from :mod:`rag_eval.runs.sources` so judge-only runs (and the Batch page)
do not import the RAG pipeline, Qdrant and scikit-learn to record them.
"""

from __future__ import annotations

from rag_eval.datasets.fingerprint import fingerprint

#: the dataset's content hash, whichever run records it
dataset_fingerprint = fingerprint


def interrupted_status(err: BaseException) -> str:
    """The run status stored when ``err`` stops a run (pipeline or judge-only alike):
    ``cancelled`` for an interrupt (Ctrl-C), ``failed`` for anything else."""
    return "cancelled" if isinstance(err, KeyboardInterrupt) else "failed"
