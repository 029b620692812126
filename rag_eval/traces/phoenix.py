"""A small client for a running Arize Phoenix server's REST API (``/v1``), over httpx.

- :meth:`PhoenixClient.iter_spans` pages through ``GET /v1/projects/{project}/spans``
  (``cursor`` / ``next_cursor``, ``start_time`` / ``end_time``);
- :meth:`PhoenixClient.trace_spans` reads one trace whole (``trace_id``), for a trace whose
  root lies before the time window an incremental import read;
- :meth:`PhoenixClient.upsert_span_annotations` posts ``POST /v1/span_annotations``: Phoenix keeps
  one annotation per (span, name, identifier) and updates it when posted again, so writing the
  same scores twice updates them instead of adding copies;
- :meth:`PhoenixClient.span_annotations` reads them back
  (``GET /v1/projects/{project}/span_annotations``).

An API key (``PHOENIX_API_KEY`` or ``--api-key-env``) is sent as ``Authorization: Bearer``; it is
never logged and never part of an error message.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import quote

import httpx

from rag_eval.config import redact
from rag_eval.traces.files import phoenix_span
from rag_eval.traces.spans import Span, iso

PAGE_SIZE = 1000
ANNOTATION_BATCH = 500


class PhoenixError(RuntimeError):
    """The server answered with an error, or could not be reached (the message names which)."""


@dataclass(slots=True)
class SpanPage:
    spans: list[Span]
    next_cursor: str | None
    raw_count: int


class PhoenixClient:
    """One Phoenix server (``url`` as the UI's address, e.g. ``http://127.0.0.1:6006``)."""

    def __init__(self, url: str, api_key: str | None = None, timeout_s: float = 60.0) -> None:
        self.url = url.rstrip("/")
        self._api_key = api_key
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.Client(base_url=self.url, headers=headers, timeout=timeout_s)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> PhoenixClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _request(self, method: str, path: str, **kwargs: Any) -> Any:
        try:
            response = self._http.request(method, path, **kwargs)
        except httpx.HTTPError as err:
            raise PhoenixError(redact(f"Phoenix at {self.url} could not be reached ({err})", self._api_key)) from None
        if response.status_code >= 400:
            detail = response.text[:300]
            raise PhoenixError(redact(f"Phoenix {method} {path} answered {response.status_code}: {detail}",
                                      self._api_key))
        return response.json() if response.content else None

    # -- spans ----------------------------------------------------------------------------------
    def span_page(self, project: str, cursor: str | None = None, limit: int = PAGE_SIZE,
                  start: datetime | None = None, end: datetime | None = None) -> SpanPage:
        params: dict[str, Any] = {"limit": limit}
        if cursor:
            params["cursor"] = cursor
        if start is not None:
            params["start_time"] = iso(start)
        if end is not None:
            params["end_time"] = iso(end)
        body = self._request("GET", f"/v1/projects/{quote(project, safe='')}/spans", params=params) or {}
        raw = body.get("data") or []
        spans = [s for s in (phoenix_span(r) for r in raw if isinstance(r, dict)) if s is not None]
        return SpanPage(spans, body.get("next_cursor") or None, len(raw))

    def iter_spans(self, project: str, start: datetime | None = None, end: datetime | None = None,
                   limit: int = PAGE_SIZE, pages: list[int] | None = None) -> Iterator[Span]:
        """Every span of ``project`` whose start lies in [start, end), page after page
        (``pages``, when given, gets each page's span count)."""
        cursor: str | None = None
        while True:
            page = self.span_page(project, cursor, limit, start, end)
            if pages is not None:
                pages.append(page.raw_count)
            yield from page.spans
            if not page.next_cursor or not page.raw_count:
                return
            cursor = page.next_cursor

    def trace_spans(self, project: str, trace_id: str) -> list[Span] | None:
        """Every span of one trace, whenever it started (the ``trace_id`` filter); None when the
        server answers with other traces' spans too (a Phoenix without that filter ignores it)."""
        spans: list[Span] = []
        cursor: str | None = None
        while True:
            params: dict[str, Any] = {"trace_id": trace_id, "limit": PAGE_SIZE}
            if cursor:
                params["cursor"] = cursor
            body = self._request("GET", f"/v1/projects/{quote(project, safe='')}/spans", params=params) or {}
            page = [s for s in (phoenix_span(r) for r in body.get("data") or [] if isinstance(r, dict))
                    if s is not None]
            if any(s.trace_id != trace_id for s in page):
                return None
            spans.extend(page)
            cursor = body.get("next_cursor") or None
            if not cursor or not page:
                return spans

    # -- annotations ----------------------------------------------------------------------------
    def upsert_span_annotations(self, annotations: Sequence[dict[str, Any]]) -> int:
        """Post annotations in batches (``sync`` so each batch is stored before the next);
        returns how many were sent."""
        for i in range(0, len(annotations), ANNOTATION_BATCH):
            self._request("POST", "/v1/span_annotations", params={"sync": "true"},
                          json={"data": list(annotations[i:i + ANNOTATION_BATCH])})
        return len(annotations)


def trace_url(base_url: str, trace_id: str) -> str:
    """The Phoenix UI's address of one trace (its ``/redirects/traces/`` route finds the project)."""
    return f"{base_url.rstrip('/')}/redirects/traces/{quote(trace_id, safe='')}"
