"""Harnesses the tests, the benchmarks (bench/) and the scripts (scripts/) share; not part of
the package (the wheel holds rag_eval only) and not tests themselves, so bench/ and scripts/
import from here, never from tests/:

- :mod:`harness.openai_server`: a real OpenAI-compatible server on loopback with fault
  injection (the ``openai_server`` pytest fixture; ``start_server()`` elsewhere);
  :mod:`harness.fake_answers`: the judge answers it gives for TRACe prompts;
- :mod:`harness.browser`: the DevTools client driving headless Chromium;
- :mod:`harness.sample_store`, :mod:`harness.examples`, :mod:`harness.run_columns`: generated
  run stores at size, the example runs of the screenshots and browser test, small store edits;
- :mod:`harness.phoenix_server` and :mod:`harness.traced_app`: a Phoenix server and a traced RAG
  application for the trace importers;
- :mod:`harness.extract_pages`: what a reader sees on the committed documentation pages;
- :mod:`harness.cli_paths`: every command of the CLI.
"""
