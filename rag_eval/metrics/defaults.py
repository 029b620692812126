"""The metrics' default parameters, in a module that imports nothing.

The command line shows them in ``--help`` (``--n-boot``, ``--seed``, ``--threshold``,
``--alpha``, ``--gamma``); keeping them here lets it do so without importing numpy,
which the modules that use them need (``tests/cli/test_startup.py``).
"""

#: Bootstrap resamples and seed of every interval (:mod:`rag_eval.metrics.aggregate`).
DEFAULT_N_BOOT = 1000
DEFAULT_SEED = 0
#: Hallucination F1 flags a row when 1 - predicted adherence >= this (:mod:`rag_eval.metrics.agreement`).
DEFAULT_F1_THRESHOLD = 0.5
#: The hybrid retrieval score's weight of recall against rank quality, and its rank
#: discount (:mod:`rag_eval.metrics.retrieval`).
DEFAULT_ALPHA = 0.5
DEFAULT_GAMMA = 1.0
