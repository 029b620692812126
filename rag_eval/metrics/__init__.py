"""Pure metric functions over plain data: TRACe, agreement, retrieval, text."""
