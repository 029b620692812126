"""Raises on import, as a plugin with a missing dependency would."""

raise ImportError("No module named 'a_dependency_that_is_not_installed'")
