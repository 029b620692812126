"""A RAG configuration: everything that decides what a RAG run does, as one named,
hashable, YAML-serialisable value.

Two runs with the same ``config_hash`` ran the same system, so the hash is what the
run store groups and compares by. The ``name`` is a label for people and is left out
of the hash: renaming a configuration does not make it a different system. No secret
is ever part of a configuration: API keys come from the environment (``*_api_key_env``
names the variable), so a saved YAML file or a stored run never holds one.
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path
from typing import Any, Literal, get_args

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from rag_eval.schema import ScoringMode

log = logging.getLogger(__name__)

DEFAULT_EMBEDDER = "all-MiniLM-L6-v2"
#: The languages of the embedding models known to cover only some (ISO 639-1); a model not
#: named here is taken to cover every language unless its configuration says otherwise
#: (``embedder.languages``). all-MiniLM-L6-v2 was trained on English pairs only: its dense recall@5
#: on the shared multilingual QA data is 0.995 in English, 0.02-0.63 in eleven others (docs/languages.md).
ENGLISH_ONLY_EMBEDDERS = frozenset({
    DEFAULT_EMBEDDER, f"{DEFAULT_EMBEDDER}-int8", "all-MiniLM-L12-v2", "all-mpnet-base-v2", "all-distilroberta-v1",
    "multi-qa-MiniLM-L6-cos-v1", "multi-qa-mpnet-base-dot-v1", "bge-small-en-v1.5", "bge-base-en-v1.5",
    "bge-large-en-v1.5", "e5-small-v2", "e5-base-v2", "e5-large-v2", "gte-small", "gte-base"})


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ChunkingConfig(_Frozen):
    """How documents are cut into chunks.

    ``sentence``: whole sentences (sentencex) packed up to ``size`` characters, the next chunk
    repeating trailing sentences worth at most ``overlap`` characters. ``tokens``: windows
    of ``size`` whitespace tokens advancing by ``size - overlap``. ``document``: one chunk
    per document (``size``/``overlap`` unused)."""

    strategy: Literal["sentence", "tokens", "document"] = "sentence"
    size: int = Field(1000, gt=0)
    overlap: int = Field(200, ge=0)

    @model_validator(mode="after")
    def _overlap_below_size(self) -> ChunkingConfig:
        if self.strategy != "document" and self.overlap >= self.size:
            raise ValueError(f"chunking overlap ({self.overlap}) must be smaller than size ({self.size})")
        return self


class EmbedderConfig(_Frozen):
    """``sentence-transformers`` (default; the packaged all-MiniLM-L6-v2 works offline; any
    other model by hub name or local folder path) or ``openai`` (any OpenAI-compatible
    ``/embeddings`` endpoint). ``languages``: the ISO 639-1 codes the model covers, when
    :data:`ENGLISH_ONLY_EMBEDDERS` does not know it (unset: every language)."""

    kind: Literal["sentence-transformers", "openai"] = "sentence-transformers"
    model: str = DEFAULT_EMBEDDER
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    languages: tuple[str, ...] | None = None

    @property
    def covered_languages(self) -> frozenset[str] | None:
        """The languages its vectors are good for; None: every language."""
        if self.languages is not None:
            return frozenset(code.strip().lower() for code in self.languages)
        name = self.model.rstrip("/").rsplit("/", 1)[-1]
        return frozenset({"en"}) if name in ENGLISH_ONLY_EMBEDDERS else None

    @property
    def coverage(self) -> str:
        """One line that says which languages the embedder reads (the Corpus page shows it)."""
        covered = self.covered_languages
        if covered is None:
            return (f"The embedder {self.label} is taken to read every language "
                    "(set embedder.languages to the ones it covers if not).")
        return (f"The embedder {self.label} reads only {', '.join(sorted(covered))}: a collection in another "
                "language is retrieved with BM25 over its words by default (mode auto); for dense retrieval in "
                "it, choose a multilingual model (docs/languages.md).")

    @property
    def label(self) -> str:
        """What a collection records as its embedder, e.g. ``sentence-transformers:all-MiniLM-L6-v2``."""
        return f"{self.kind}:{self.model}"


RetrievalMode = Literal["auto", "dense", "bm25", "hybrid"]
RETRIEVAL_MODES: tuple[str, ...] = get_args(RetrievalMode)  # what the CLI and the pages offer


class RetrievalConfig(_Frozen):
    """``dense`` (embeddings), ``bm25`` (sparse term frequencies, Qdrant's IDF modifier),
    ``hybrid`` (both, fused by reciprocal rank) or ``auto`` (the default: dense when the
    embedder covers the collection's languages, else what measured best for a language the
    embedder cannot read: :func:`rag_eval.rag.retrieve.resolve_mode`). ``score_threshold``
    drops weaker chunks (for hybrid it applies to the dense candidates, as fused RRF scores
    have no scale)."""

    mode: RetrievalMode = "auto"
    k: int = Field(5, gt=0, le=1000)
    score_threshold: float | None = None


class GeneratorConfig(_Frozen):
    """``extractive`` (offline: the retrieved sentences closest to the question) or
    ``openai`` (any OpenAI-compatible chat endpoint; same settings as the LLM judge)."""

    kind: Literal["extractive", "openai"] = "extractive"
    model: str | None = None
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    prompt_template: str = "ragbench_basic"
    temperature: float = Field(0.0, ge=0.0, le=2.0)
    max_tokens: int = Field(512, gt=0)
    max_sentences: int = Field(3, gt=0)  # extractive only


class JudgeConfig(_Frozen):
    """Which judge labels the answers: a kind of the judge-kind registry
    (:mod:`rag_eval.judges.kinds`: ``local``, the offline learned judge; ``llm``; or a
    plugin's), checked by :func:`rag_eval.judges.factory.build_judge` before any row.

    ``calibration`` names a stored calibration of the local judge (``rag-eval calibrate FILE
    --name NAME``), so a configuration can say ``local:NAME``.
    ``options``: a plugin judge's options (validated by its kind's model)."""

    kind: str = Field("local", pattern=r"^[A-Za-z0-9_-]+$")
    model: str | None = None
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    prompt_id: str | None = None
    concurrency: int = Field(4, gt=0)
    calibration: str | None = None
    options: dict[str, Any] | None = None


class RagConfig(_Frozen):
    """A named RAG system. See the module docstring for what the hash covers."""

    name: str = "default"
    chunking: ChunkingConfig = ChunkingConfig()
    embedder: EmbedderConfig = EmbedderConfig()
    retrieval: RetrievalConfig = RetrievalConfig()
    generator: GeneratorConfig = GeneratorConfig()
    judge: JudgeConfig = JudgeConfig()
    scoring_mode: ScoringMode = ScoringMode.CLEAN
    #: The language of the corpus and the questions (ISO 639-1) when the owner knows it: documents,
    #: questions and answers are split, tokenized and judged in it instead of the detected one
    #: (a corpus row's or a question row's own ``language`` still wins). None: detect per text.
    language: str | None = Field(None, pattern=r"^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8})*$")

    @field_validator("name")
    @classmethod
    def _name_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("name must not be blank")
        return value.strip()

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")

    @property
    def config_hash(self) -> str:
        """12 hex digits of sha256 over the canonical JSON of everything but ``name``."""
        payload = {k: v for k, v in self.to_dict().items() if k != "name"}
        for part, added in (("judge", "calibration"), ("judge", "options"), ("embedder", "languages")):
            if payload[part].get(added) is None:  # configurations from before these fields keep their hash
                payload[part].pop(added, None)
        if payload.get("language") is None:
            payload.pop("language", None)
        canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:12]

    def __hash__(self) -> int:
        return hash(self.config_hash)

    def with_changes(self, **changes: Any) -> RagConfig:
        """A copy with dotted-path changes, e.g. ``with_changes(**{"retrieval.k": 2})``."""
        data = self.to_dict()
        for path, value in changes.items():
            node = data
            parts = path.split(".")
            for part in parts[:-1]:
                node = node[part]
            node[parts[-1]] = value
        return RagConfig.model_validate(data)

    def to_yaml(self, path: str | Path | None = None) -> str:
        """The YAML text; also written to ``path`` when given."""
        text = yaml.safe_dump(self.to_dict(), sort_keys=False)
        if path is not None:
            Path(path).write_text(text, encoding="utf-8")
        return text

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str = "configuration") -> RagConfig:
        """Validate a plain dict; errors name the offending field (``retrieval.k: ...``)."""
        if not isinstance(data, dict):
            raise ValueError(f"{source}: expected a mapping at the top level, got {type(data).__name__}")
        try:
            return cls.model_validate(data)
        except ValidationError as err:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or '(top)'}: {e['msg']}" for e in err.errors()
            )
            raise ValueError(f"{source}: {problems}") from None

    @classmethod
    def from_yaml(cls, source: str | Path, trust_endpoints: bool = False) -> RagConfig:
        """Load from a YAML file path (or YAML text when ``source`` is not an existing file).

        An endpoint the file names that the environment does not configure gets no key from
        the environment in this process (a file can come from a pull request; a warning says
        so), unless ``trust_endpoints`` (the CLI's ``--trust-config-endpoints``)."""
        label = "configuration"
        text = source
        if isinstance(source, Path) or (isinstance(source, str) and "\n" not in source and source.endswith((".yaml", ".yml"))):
            path = Path(source)
            if not path.is_file():
                raise ValueError(f"{path}: no such configuration file")
            label, text = str(path), path.read_text(encoding="utf-8")
        try:
            data = yaml.safe_load(text) or {}
        except yaml.YAMLError as err:
            raise ValueError(f"{label}: not valid YAML ({err})") from None
        config = cls.from_dict(data, source=label)
        config._withhold_keys(label, withhold=not trust_endpoints)
        return config

    def _withhold_keys(self, label: str, withhold: bool) -> None:
        """No key from the environment for the endpoints this configuration names that the
        environment does not configure (``llm.policy.file_endpoints``), nor from a key variable
        it names other than the environment's LLM key variable, with a warning for each that a
        key would otherwise have been sent; ``withhold=False``: the user trusts them."""
        from rag_eval.config import setting, withhold_key_variable, withhold_keys_from
        from rag_eval.llm.config import public_url
        from rag_eval.llm.constants import DEFAULT_API_KEY_ENV
        from rag_eval.llm.policy import file_endpoints

        parts: dict[str, EmbedderConfig | GeneratorConfig | JudgeConfig] = {
            "embedder": self.embedder, "generator": self.generator, "judge": self.judge}
        configured = setting("RAG_EVAL_LLM_BASE_URL") or setting("OPENAI_BASE_URL")
        named = {f"{name}.base_url": part.base_url for name, part in parts.items()}
        for field, url in file_endpoints(named, configured).items():
            withhold_keys_from(url, withhold)
            key_env = parts[field.split(".")[0]].api_key_env
            if withhold and setting(key_env):
                log.warning("%s: %s names the endpoint %s, which the environment does not configure: %s is not sent "
                            "there (a configuration file can come from anyone). To send it, set RAG_EVAL_LLM_BASE_URL "
                            "to that endpoint or pass --trust-config-endpoints.", label, field, public_url(url), key_env)
        home_key = setting("RAG_EVAL_LLM_API_KEY_ENV") or DEFAULT_API_KEY_ENV
        for name, part in parts.items():  # another secret of the environment is no LLM key for a file to pick
            if part.api_key_env != home_key:
                withhold_key_variable(part.api_key_env, withhold)
                if withhold and setting(part.api_key_env):
                    log.warning("%s: %s.api_key_env names %s, not the environment's LLM key variable %s: it is not "
                                "sent (a configuration file can come from anyone). To send it, set "
                                "RAG_EVAL_LLM_API_KEY_ENV=%s or pass --trust-config-endpoints.", label, name,
                                part.api_key_env, home_key, part.api_key_env)


def default_config(name: str = "default") -> RagConfig:
    """The offline configuration: MiniLM, top-5 by the retrieval that fits the collection's
    language (dense for English), extractive generator, local judge."""
    return RagConfig(name=name)
