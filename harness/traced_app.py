"""A small traced RAG application, run in the Phoenix venv (.venv-phoenix) as a subprocess.

It is instrumented as a user's application would be: the OpenTelemetry SDK, OpenInference's
semantic conventions for the chain, retriever and reranker spans it opens itself, and
``openinference-instrumentation-openai`` around real calls to the local OpenAI-compatible test
server (harness/openai_server.py). Spans go over OTLP/HTTP to Phoenix and, through a small
exporter, to an OTLP JSON file (one ExportTraceServiceRequest per line, ids in hex, as an
OpenTelemetry Collector's file exporter writes them).

Usage: python traced_app.py --endpoint URL --openai-base-url URL --project NAME --out-otlp FILE
       [--paging N] [--only-paging] [--shift-seconds S] [--hold FILE]
       python traced_app.py --export-parquet FILE --phoenix URL --project NAME

Prints one JSON line: {"kinds": {trace_id: kind, ...}} so the test knows which trace is which.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import os
import threading
import time
from collections.abc import Sequence

# A small corpus: Debian-style facts, with markup that must stay text.
CORPUS = [
    ("doc-apt", "APT is the package manager of Debian. It installs packages and resolves their dependencies."),
    ("doc-dpkg", "dpkg is the low-level tool that unpacks .deb files. APT calls dpkg to install packages."),
    ("doc-html", "<b>Bold</b> claims and <script>alert(1)</script> tags are only text in a span."),
    ("doc-md", "# Heading\n\n* a Markdown list item with **bold** text and a [link](http://example.invalid)."),
]
QUESTIONS = [
    "What does APT do?",
    "Which tool unpacks .deb files?",
    "Is <script> markup run?",
]


class JsonLinesExporter:
    """Spans as OTLP JSON lines (the collector's file exporter format)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._lock = threading.Lock()
        open(path, "w").close()

    def export(self, spans: Sequence[object]) -> object:
        from google.protobuf.json_format import MessageToDict
        from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
        from opentelemetry.sdk.trace.export import SpanExportResult

        request = MessageToDict(encode_spans(spans))
        for resource in request.get("resourceSpans", []):
            for scope in resource.get("scopeSpans", []):
                for span in scope.get("spans", []):
                    for key in ("traceId", "spanId", "parentSpanId"):
                        if span.get(key):
                            span[key] = base64.b64decode(span[key]).hex()
        with self._lock, open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(request) + "\n")
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


def _documents(span, prefix: str, docs) -> None:
    for i, (doc_id, text, score) in enumerate(docs):
        span.set_attribute(f"{prefix}.{i}.document.id", doc_id)
        span.set_attribute(f"{prefix}.{i}.document.content", text)
        span.set_attribute(f"{prefix}.{i}.document.score", score)
        span.set_attribute(f"{prefix}.{i}.document.metadata", json.dumps({"source": doc_id + ".txt"}))


def run_app(args: argparse.Namespace) -> dict[str, str]:
    from openai import OpenAI
    from openinference.instrumentation.openai import OpenAIInstrumentor
    from openinference.semconv.resource import ResourceAttributes
    from openinference.semconv.trace import OpenInferenceSpanKindValues, SpanAttributes
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    provider = TracerProvider(resource=Resource({ResourceAttributes.PROJECT_NAME: args.project}))
    # queues large enough that no span is dropped while thousands of traces are made at once
    for exporter in (OTLPSpanExporter(args.endpoint, timeout=120), JsonLinesExporter(args.out_otlp)):
        provider.add_span_processor(BatchSpanProcessor(exporter, max_queue_size=1_000_000, max_export_batch_size=512))
    OpenAIInstrumentor().instrument(tracer_provider=provider)
    tracer = provider.get_tracer("traced-app")
    client = OpenAI(base_url=args.openai_base_url, api_key="test-key")
    kind_key = SpanAttributes.OPENINFERENCE_SPAN_KIND
    kinds: dict[str, str] = {}

    def answer(question: str, docs) -> str:
        context = "\n".join(text for _, text, _ in docs)
        reply = client.chat.completions.create(model="test-model", messages=[
            {"role": "system", "content": "Answer from the context only."},
            {"role": "user", "content": f"Context:\n{context}\n\nQuestion: {question}"},
        ])
        return reply.choices[0].message.content or ""

    def retrieve(question: str):
        words = set(question.lower().split())
        ranked = sorted(CORPUS, key=lambda d: -len(words & set(d[1].lower().split())))
        docs = [(doc_id, text, round(1.0 - 0.1 * i, 2)) for i, (doc_id, text) in enumerate(ranked[:3])]
        with tracer.start_as_current_span("retrieve") as span:
            span.set_attribute(kind_key, OpenInferenceSpanKindValues.RETRIEVER.value)
            span.set_attribute(SpanAttributes.INPUT_VALUE, question)
            _documents(span, "retrieval.documents", docs)
        with tracer.start_as_current_span("rerank") as span:
            span.set_attribute(kind_key, OpenInferenceSpanKindValues.RERANKER.value)
            span.set_attribute("reranker.query", question)
            _documents(span, "reranker.input_documents", docs)
            _documents(span, "reranker.output_documents", docs[:2])
        return docs[:2]

    if not args.only_paging:  # the application's own kinds of trace
        # chains with retriever, reranker and LLM spans
        for n, question in enumerate(QUESTIONS):
            with tracer.start_as_current_span("rag-query") as root:
                root.set_attribute(kind_key, OpenInferenceSpanKindValues.CHAIN.value)
                root.set_attribute(SpanAttributes.INPUT_VALUE, question)
                root.set_attribute(SpanAttributes.SESSION_ID, f"session-{n % 2}")
                root.set_attribute(SpanAttributes.USER_ID, "user-7")
                root.set_attribute(SpanAttributes.METADATA, json.dumps({"release": "v1"}))
                reply = answer(question, retrieve(question))
                root.set_attribute(SpanAttributes.OUTPUT_VALUE, reply)
                kinds[format(root.get_span_context().trace_id, "032x")] = "chain"
        # a trace without a retriever
        with tracer.start_as_current_span("chat-only") as root:
            root.set_attribute(kind_key, OpenInferenceSpanKindValues.CHAIN.value)
            root.set_attribute(SpanAttributes.INPUT_VALUE, "Tell me a joke.")
            root.set_attribute(SpanAttributes.OUTPUT_VALUE, answer("Tell me a joke.", []))
            kinds[format(root.get_span_context().trace_id, "032x")] = "no_retriever"
        # JSON input (the question under "query")
        with tracer.start_as_current_span("rag-json") as root:
            root.set_attribute(kind_key, OpenInferenceSpanKindValues.CHAIN.value)
            root.set_attribute(SpanAttributes.INPUT_VALUE, json.dumps({"query": QUESTIONS[0], "top_k": 2}))
            root.set_attribute(SpanAttributes.INPUT_MIME_TYPE, "application/json")
            root.set_attribute(SpanAttributes.OUTPUT_VALUE, answer(QUESTIONS[0], retrieve(QUESTIONS[0])))
            kinds[format(root.get_span_context().trace_id, "032x")] = "json_input"
        # a root without input/output: the LLM span's messages decide
        with tracer.start_as_current_span("rag-bare") as root:
            root.set_attribute(kind_key, OpenInferenceSpanKindValues.CHAIN.value)
            answer(QUESTIONS[1], retrieve(QUESTIONS[1]))
            kinds[format(root.get_span_context().trace_id, "032x")] = "llm_fallback"
        # malformed JSON value
        with tracer.start_as_current_span("rag-bad-json") as root:
            root.set_attribute(kind_key, OpenInferenceSpanKindValues.CHAIN.value)
            root.set_attribute(SpanAttributes.INPUT_VALUE, '{"query": "unterminated')
            root.set_attribute(SpanAttributes.INPUT_MIME_TYPE, "application/json")
            root.set_attribute(SpanAttributes.OUTPUT_VALUE, "whatever")
            retrieve(QUESTIONS[0])
            kinds[format(root.get_span_context().trace_id, "032x")] = "bad_json"
    # many small traces for paging (no model call: spans as an instrumentation writes them); with
    # --shift-seconds their spans start and end that much earlier (a retry, a long trace, a skewed clock)
    shift_ns = int(args.shift_seconds * 1e9)

    @contextlib.contextmanager
    def shifted(name: str):
        with tracer.start_as_current_span(name, start_time=time.time_ns() + shift_ns, end_on_exit=False) as span:
            yield span
        span.end(end_time=time.time_ns() + shift_ns)

    for i in range(args.paging):
        with shifted("page-query") as root:
            root.set_attribute(kind_key, OpenInferenceSpanKindValues.CHAIN.value)
            root.set_attribute(SpanAttributes.INPUT_VALUE, f"What is fact {i}?")
            with shifted("retrieve") as span:
                span.set_attribute(kind_key, OpenInferenceSpanKindValues.RETRIEVER.value)
                _documents(span, "retrieval.documents", [(f"fact-{i}", f"Fact {i} is that {i} is a number.", 0.9)])
            root.set_attribute(SpanAttributes.OUTPUT_VALUE, f"Fact {i} is that {i} is a number.")
            kinds[format(root.get_span_context().trace_id, "032x")] = "paging"
    # --hold FILE: one trace whose retriever span is exported at once while its root stays open
    # until FILE exists (a long trace caught half-way by an import)
    if args.hold:
        with tracer.start_as_current_span("held-query") as root:
            root.set_attribute(kind_key, OpenInferenceSpanKindValues.CHAIN.value)
            root.set_attribute(SpanAttributes.INPUT_VALUE, "What is held?")
            trace_id = format(root.get_span_context().trace_id, "032x")
            with tracer.start_as_current_span("retrieve") as span:
                span.set_attribute(kind_key, OpenInferenceSpanKindValues.RETRIEVER.value)
                _documents(span, "retrieval.documents", [("held", "Held is a fact.", 0.9)])
            provider.force_flush()
            print(json.dumps({"held": trace_id}), flush=True)
            deadline = time.monotonic() + 600
            while not os.path.exists(args.hold) and time.monotonic() < deadline:
                time.sleep(0.1)
            root.set_attribute(SpanAttributes.OUTPUT_VALUE, "Held is a fact.")
            kinds[trace_id] = "held"
    provider.force_flush()
    provider.shutdown()
    return kinds


def export_parquet(args: argparse.Namespace) -> None:
    from phoenix.client import Client

    frame = Client(base_url=args.phoenix).spans.get_spans_dataframe(project_identifier=args.project, limit=100_000)
    frame.reset_index(drop=True).to_parquet(args.export_parquet, index=False)
    print(json.dumps({"rows": len(frame), "columns": sorted(map(str, frame.columns))}))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--endpoint")
    parser.add_argument("--openai-base-url")
    parser.add_argument("--project", default="default")
    parser.add_argument("--out-otlp")
    parser.add_argument("--paging", type=int, default=0)
    parser.add_argument("--only-paging", action="store_true", help="send the paging traces only")
    parser.add_argument("--shift-seconds", type=float, default=0.0, help="paging spans start this much later")
    parser.add_argument("--hold", help="end one more trace's root only once this file exists")
    parser.add_argument("--export-parquet")
    parser.add_argument("--phoenix")
    args = parser.parse_args()
    if args.export_parquet:
        export_parquet(args)
        return
    print(json.dumps({"kinds": run_app(args)}))


if __name__ == "__main__":
    main()
