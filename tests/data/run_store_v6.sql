BEGIN TRANSACTION;
CREATE TABLE human_labels (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        run_id TEXT NOT NULL,
        item_id TEXT NOT NULL,
        reviewer TEXT NOT NULL,
        created_at TEXT NOT NULL,
        record_json TEXT NOT NULL
    );
INSERT INTO "human_labels" VALUES(1,'20261126-102843-37d9fc','a','ann','2026-11-26T10:28:43+00:00','{"labels": {"all_relevant_sentence_keys": ["0a"]}}');
INSERT INTO "human_labels" VALUES(2,'20261126-102843-37d9fc','a','ann','2026-11-26T10:28:43+00:00','{"labels": {"all_relevant_sentence_keys": ["0a", "0b"]}}');
CREATE TABLE items (
        run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        item_id TEXT NOT NULL,
        position INTEGER NOT NULL,
        status TEXT NOT NULL,
        error TEXT,
        question TEXT,
        record_json TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (run_id, item_id)
    );
INSERT INTO "items" VALUES('20261126-102843-37d9fc','a',0,'ok',NULL,'What is WAL?','{"item_id": "a", "position": 0, "status": "ok", "question": "What is WAL?", "scores": {"completeness": 1.0, "adherence": 1.0}, "labels": {"all_relevant_sentence_keys": ["0a"]}, "latency_s": 0.5}','2026-11-26T10:28:43+00:00');
INSERT INTO "items" VALUES('20261126-102843-37d9fc','b',1,'ok',NULL,'Why SQLite?','{"item_id": "b", "position": 1, "status": "ok", "question": "Why SQLite?", "scores": {"completeness": 0.5, "adherence": 0.0}, "latency_s": 1.5}','2026-11-26T10:28:43+00:00');
INSERT INTO "items" VALUES('20261126-102843-37d9fc','c',2,'timeout','took too long',NULL,'{"item_id": "c", "position": 2, "status": "timeout", "error": "took too long"}','2026-11-26T10:28:43+00:00');
INSERT INTO "items" VALUES('20261126-102843-f285a8','a',0,'ok',NULL,'What is WAL?','{"item_id": "a", "position": 0, "status": "ok", "question": "What is WAL?", "scores": {"completeness": 0.25}}','2026-11-26T10:28:43+00:00');
CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        created_at TEXT NOT NULL,
        finished_at TEXT,
        status TEXT NOT NULL,
        config_name TEXT NOT NULL,
        config_hash TEXT NOT NULL,
        config_json TEXT NOT NULL,
        collection TEXT,
        dataset_path TEXT,
        dataset_fingerprint TEXT,
        n_items INTEGER NOT NULL DEFAULT 0,
        summary_json TEXT,
        error TEXT
    , meta_json TEXT, owner TEXT, heartbeat_at TEXT, tags_json TEXT, note TEXT);
INSERT INTO "runs" VALUES('20261126-102843-37d9fc','old-finished','2026-11-26T10:28:43+00:00','2026-11-26T10:28:43+00:00','finished','base','da6eee463d80','{"name": "base", "chunking": {"strategy": "sentence", "size": 1000, "overlap": 200}, "embedder": {"kind": "sentence-transformers", "model": "all-MiniLM-L6-v2", "base_url": null, "api_key_env": "OPENAI_API_KEY"}, "retrieval": {"mode": "dense", "k": 5, "score_threshold": null}, "generator": {"kind": "extractive", "model": null, "base_url": null, "api_key_env": "OPENAI_API_KEY", "prompt_template": "ragbench_basic", "temperature": 0.0, "max_tokens": 512, "max_sentences": 3}, "judge": {"kind": "local", "model": null, "base_url": null, "api_key_env": "OPENAI_API_KEY", "prompt_id": null, "concurrency": 4, "calibration": null}, "scoring_mode": "clean"}','demo','rows.jsonl','sha256:abc',3,'{"n_items": 3, "n_scored": 2, "coverage": 0.6666666666666666, "status_counts": {"ok": 2, "timeout": 1}, "metrics": {"context_relevance": {"mean": null, "ci_low": null, "ci_high": null, "n": 0, "coverage": 0.0, "reason": "no value to average"}, "context_utilization": {"mean": null, "ci_low": null, "ci_high": null, "n": 0, "coverage": 0.0, "reason": "no value to average"}, "completeness": {"mean": 0.75, "ci_low": 0.5, "ci_high": 1.0, "n": 2, "coverage": 0.6666666666666666, "reason": null}, "adherence": {"mean": 0.5, "ci_low": 0.0, "ci_high": 1.0, "n": 2, "coverage": 0.6666666666666666, "reason": null}, "adherence_score": {"mean": null, "ci_low": null, "ci_high": null, "n": 0, "coverage": 0.0, "reason": "no value to average"}}, "retrieval": {}, "tokens_total": 0, "cost_usd_total": null, "latency_p50_s": 1.0, "latency_p95_s": 1.45, "agreement": []}',NULL,'{"kind": "judge-given-responses"}','vm:12173:8c3b67','2026-11-26T10:28:43+00:00','["baseline"]','made by the pre-Alembic store');
INSERT INTO "runs" VALUES('20261126-102843-f285a8','old-interrupted','2026-11-26T10:28:43+00:00',NULL,'running','k5','da6eee463d80','{"name": "k5", "chunking": {"strategy": "sentence", "size": 1000, "overlap": 200}, "embedder": {"kind": "sentence-transformers", "model": "all-MiniLM-L6-v2", "base_url": null, "api_key_env": "OPENAI_API_KEY"}, "retrieval": {"mode": "dense", "k": 5, "score_threshold": null}, "generator": {"kind": "extractive", "model": null, "base_url": null, "api_key_env": "OPENAI_API_KEY", "prompt_template": "ragbench_basic", "temperature": 0.0, "max_tokens": 512, "max_sentences": 3}, "judge": {"kind": "local", "model": null, "base_url": null, "api_key_env": "OPENAI_API_KEY", "prompt_id": null, "concurrency": 4, "calibration": null}, "scoring_mode": "clean"}',NULL,NULL,NULL,2,NULL,NULL,'{}','vm:12173:8c3b67','2026-11-26T10:28:43+00:00',NULL,NULL);
CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL);
INSERT INTO "schema_migrations" VALUES(1,'2026-11-26T10:28:43+00:00');
INSERT INTO "schema_migrations" VALUES(2,'2026-11-26T10:28:43+00:00');
INSERT INTO "schema_migrations" VALUES(3,'2026-11-26T10:28:43+00:00');
INSERT INTO "schema_migrations" VALUES(4,'2026-11-26T10:28:43+00:00');
INSERT INTO "schema_migrations" VALUES(5,'2026-11-26T10:28:43+00:00');
INSERT INTO "schema_migrations" VALUES(6,'2026-11-26T10:28:43+00:00');
CREATE INDEX runs_created ON runs(created_at);
CREATE INDEX runs_config ON runs(config_hash);
CREATE INDEX items_status ON items(run_id, status);
CREATE INDEX human_labels_item ON human_labels(run_id, item_id, reviewer);
CREATE INDEX items_position ON items(run_id, position, item_id);
DELETE FROM "sqlite_sequence";
INSERT INTO "sqlite_sequence" VALUES('human_labels',2);
COMMIT;
