"""The shared look of the dashboard (``ui``) and the offline HTML report (``report``):
colours and labels (:mod:`~rag_eval.display.style`), the support map as HTML
(:mod:`~rag_eval.display.support_map`), a stored record as a support-map view
(:mod:`~rag_eval.display.views`) and the per-row spread table (:mod:`~rag_eval.display.tables`).
No Streamlit here: both rooms above may use it."""
