"""Reading and writing rows of evaluation data (JSONL, JSON, CSV, Parquet)."""
