"""Human labels at the sentence level: review, queues, judge-vs-human agreement and
calibration of the local judge to a reviewer's domain.

- :mod:`.review`   a human label set (RAGBench schema + reviewer, time, note) built from
  a reviewer's choices, with TRACe recomputed from it (pure);
- :mod:`.store`    saving and reading label sets in the run store, beside the judge's labels;
- :mod:`.queue`    which rows to review next (pure);
- :mod:`.agreement` each judge against the human labels, and judge against judge (pure);
- :mod:`.exchange` export / import of label sets (RAGBench parquet, JSONL);
- :mod:`.calibrate` adapting the local judge to labelled rows (per-metric moves chosen by cross-validation).
"""
