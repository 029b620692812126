"""One file per schema step, in order (Alembic revisions 0001, 0002, …)."""
