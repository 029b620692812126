"""Pipeline CLI tests reuse the run tests' demo fixtures."""

from tests.runs.conftest import demo_collection, demo_questions  # noqa: F401  (fixtures)
