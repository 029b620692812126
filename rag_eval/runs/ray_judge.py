"""Where the Ray judge used to live: it is built by :func:`rag_eval.judges.factory.build_judge`
(``ray=RaySpec(...)``) and lives in :mod:`rag_eval.judges.ray`; these names stay importable."""

from rag_eval.judges.ray import (  # noqa: F401  (re-exported)
    ADDRESS_SETTING,
    CHUNK_ROWS,
    DEFAULT_MAX_WORKERS,
    LOCAL_ADDRESS,
    MAX_WORKERS_SETTING,
    RayCluster,
    RayJudge,
    RayUnavailable,
    configured_cluster,
    init_ray,
)
