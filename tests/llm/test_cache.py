from __future__ import annotations

import threading

import pytest

from rag_eval.llm.cache import LLMCache, cache_key


def test_key_ignores_dict_order_and_changes_with_content():
    a = cache_key({"model": "m", "messages": [{"role": "user", "content": "x"}], "t": 0})
    b = cache_key({"t": 0, "messages": [{"content": "x", "role": "user"}], "model": "m"})
    c = cache_key({"model": "m", "messages": [{"role": "user", "content": "y"}], "t": 0})
    assert a == b != c
    assert len(a) == 64


def test_round_trip_and_miss(tmp_path):
    cache = LLMCache(tmp_path / "c")
    key = cache_key({"q": 1})
    assert cache.get(key) is None and key not in cache and len(cache) == 0
    cache.put(key, {"text": "héllo"})
    assert cache.get(key) == {"text": "héllo"}
    assert key in cache and len(cache) == 1


def test_corrupt_entry_is_a_miss(tmp_path):
    cache = LLMCache(tmp_path)
    key = cache_key({"q": 2})
    cache.put(key, {"ok": True})
    path = tmp_path / key[:2] / f"{key}.json"
    path.write_text("{torn", encoding="utf-8")
    assert cache.get(key) is None


def test_rejects_non_hex_key(tmp_path):
    with pytest.raises(ValueError, match="cache key"):
        LLMCache(tmp_path).get("../../etc/passwd")


def test_concurrent_writers_leave_a_whole_file(tmp_path):
    cache = LLMCache(tmp_path)
    key = cache_key({"q": "same"})
    big = {"text": "x" * 100_000}

    def write(n: int) -> None:
        for _ in range(20):
            cache.put(key, big | {"n": n})

    threads = [threading.Thread(target=write, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    value = cache.get(key)
    assert value is not None and value["text"] == big["text"]
    assert not list(tmp_path.glob("**/.tmp-*"))  # no temp files left behind
