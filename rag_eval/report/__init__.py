"""The offline HTML report (``rag-eval report``, the Runs page's "Download report"): one
self-contained file of one or more stored runs.

- :mod:`.html`      builds the page (:func:`~rag_eval.report.html.build_report`,
  :func:`~rag_eval.report.html.write_report`) from the library's numbers;
- :mod:`.charts`    its Plotly figures (plotly.js is inlined, so the file opens offline);
- :mod:`.defaults`  the defaults the command line shows in its help (light to import).

It reads runs and metrics and shares the dashboard's presentation pieces (colours,
support maps); it never computes a metric itself.
"""
