from __future__ import annotations

import json

import pytest

from rag_eval.runs.judge_file import load_entries, summarize


def test_load_entries_keeps_order_ids_and_pre_split_sentences(tmp_path, ragbench_rows):
    path = tmp_path / "in.jsonl"
    rows = [ragbench_rows[0], {"question": "q"},
            {"question": "q", "response": "It rains. It pours.", "documents": ["Rain falls. Snow too."]}]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n{oops\n", encoding="utf-8")
    entries = load_entries(path)
    assert [e.row_number for e in entries] == [1, 2, 3, 4]
    assert entries[0].item.id == str(ragbench_rows[0]["id"])
    assert entries[0].item.document_keys == [p[0] for doc in ragbench_rows[0]["documents_sentences"] for p in doc]
    assert entries[1].item is None and entries[1].error.field == "response" and entries[1].error.row == 2
    assert entries[2].item_id == "row-3" and entries[2].item.response_keys == ["a", "b"]
    assert entries[3].item is None and "invalid JSON" in entries[3].error.message


def test_summary_averages_usable_rows_only():
    rows = [
        {"id": "1", "status": "ok", "context_relevance": 0.5, "adherence": True, "tokens": {"total": 3}, "cost_usd": 0.1},
        {"id": "2", "status": "timeout", "context_relevance": None, "error": "slow", "tokens": {}, "cost_usd": None},
        {"id": "3", "status": "repaired", "context_relevance": 1.0, "adherence": False, "tokens": {"total": 2}},
    ]
    s = summarize(rows)
    assert s.counts == {"ok": 1, "repaired": 1, "timeout": 1} and s.coverage == pytest.approx(2 / 3)
    assert s.means["context_relevance"] == 0.75 and s.means["adherence"] == 0.5
    assert s.tokens["total"] == 5 and s.cost_usd == 0.1 and s.failed == 1 and s.errors == ["2: timeout: slow"]
