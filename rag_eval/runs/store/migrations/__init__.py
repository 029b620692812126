"""The run store's Alembic migrations (``versions/``), applied by
:func:`rag_eval.runs.store.migrate.migrate` when a store opens."""
