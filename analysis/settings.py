"""Settings of the per-user analysis queue and the pipeline: read from the environment at the edge.

The entry points (actors/config.py for the worker and the scheduler, web/app.py's factory, the
CLI, the demo) read them once with ``from_env()`` and pass them down; nothing in analysis/ reads
the environment. The judge's and the embedder's settings travel inside :class:`PipelineSettings`,
so whatever judges or retrieves has them where it has the rest of the pipeline's."""

from __future__ import annotations

from typing import Annotated, Literal

from collections.abc import Mapping

from pydantic import BeforeValidator, Field

from broker.settings import EnvSettings, env_field

#: A judge kind as ``CITEQ_JUDGE`` names it, in any case, blanks around it ignored.
JudgeKind = Annotated[Literal["offline", "openai"],
                      BeforeValidator(lambda v: v.strip().lower() if isinstance(v, str) else v)]


class JudgeChoice(EnvSettings):
    """The one reading of ``CITEQ_JUDGE``: the judge the workers build
    (:class:`JudgeSettings`) and the provider whose daily budget admission checks
    (:class:`QueueSettings`) are the same."""

    judge_provider: JudgeKind = env_field("offline", "CITEQ_JUDGE", "judge kind: offline | openai")


#: Answers of one citation the judge reads before it gives up and says `uncertain`.
DEFAULT_ATTEMPTS = 3
#: Texts per embeddings request. OpenAI accepts up to 2048 inputs; 64 passages of ~120 words keep
#: a request well under any provider's token limit per call and a failure cheap to lose.
DEFAULT_EMBEDDINGS_BATCH = 64

EmbedderKind = Annotated[Literal["local", "openai", "none"],
                         BeforeValidator(lambda v: v.strip().lower() if isinstance(v, str) else v)]


class JudgeSettings(JudgeChoice):
    """Judge configuration: ``CITEQ_JUDGE`` (:class:`JudgeChoice`) and the ``CITEQ_JUDGE_*``
    variables of the openai judge."""

    base_url: str | None = env_field(None, "CITEQ_JUDGE_BASE_URL", "openai judge: endpoint base URL")
    model: str | None = env_field(None, "CITEQ_JUDGE_MODEL", "openai judge: model")
    api_key: str | None = env_field(None, "CITEQ_JUDGE_API_KEY",
                                    "openai judge: API key (redacted from every log and error)", repr=False)
    timeout: float = env_field(30.0, "CITEQ_JUDGE_TIMEOUT", "openai judge: request timeout, seconds", gt=0)
    attempts: int = env_field(DEFAULT_ATTEMPTS, "CITEQ_JUDGE_ATTEMPTS",
                              "openai judge: answers read per citation before uncertain", ge=1, le=10)

    @property
    def kind(self) -> str:
        return self.judge_provider


class EmbeddingsSettings(EnvSettings):
    """Embedder configuration from CITEQ_EMBEDDER and the CITEQ_EMBEDDINGS_* variables
    (:meth:`resolved` fills in the judge's endpoint and key where they are unset)."""

    kind: EmbedderKind | None = env_field(
        None, "CITEQ_EMBEDDER", "embedder: local (bundled multilingual-e5-small, the default) | openai | none")
    model: str | None = env_field(None, "CITEQ_EMBEDDINGS_MODEL",
                                  "model of the openai embedder (set alone, it chooses the openai embedder)")
    base_url: str | None = env_field(None, "CITEQ_EMBEDDINGS_BASE_URL",
                                     "embeddings endpoint base URL (default CITEQ_JUDGE_BASE_URL)")
    api_key: str | None = env_field(None, "CITEQ_EMBEDDINGS_API_KEY",
                                    "embeddings API key (default CITEQ_JUDGE_API_KEY)", repr=False)
    timeout: float = env_field(30.0, "CITEQ_EMBEDDINGS_TIMEOUT", "embeddings request timeout, seconds", gt=0)
    batch_size: int = env_field(DEFAULT_EMBEDDINGS_BATCH, "CITEQ_EMBEDDINGS_BATCH", "texts per embeddings request",
                                ge=1, le=2048)

    def resolved(self, judge: JudgeSettings) -> EmbeddingsSettings:
        """These settings with the kind decided and, for the openai embedder, the judge's endpoint
        and key where none of their own is set; ValueError when the openai embedder lacks a model
        or an endpoint (see analysis/pipeline/retrieval/embeddings.py)."""
        settings = self
        if settings.kind is None:
            settings = settings.model_copy(update={"kind": "openai" if settings.model else "local"})
        if settings.kind != "openai":
            return settings
        if settings.model is None:
            raise ValueError("CITEQ_EMBEDDER=openai needs CITEQ_EMBEDDINGS_MODEL")
        settings = settings.model_copy(update={"base_url": settings.base_url or judge.base_url,
                                               "api_key": settings.api_key or judge.api_key})
        if settings.base_url is None:
            raise ValueError("CITEQ_EMBEDDINGS_MODEL needs CITEQ_EMBEDDINGS_BASE_URL or CITEQ_JUDGE_BASE_URL")
        return settings


class QueueSettings(JudgeChoice):
    """How admission, release and the sweepers behave. Every field has an environment variable."""

    job_cost: int = env_field(1, "CITEQ_JOB_COST", "credits one analysis costs (a delta re-check the same)", ge=0)
    max_active_jobs: int = env_field(
        50, "CITEQ_MAX_ACTIVE_JOBS", "first-pass analyses a user may have queued, pending or running", ge=1)
    max_options_bytes: int = env_field(
        16 * 1024, "CITEQ_MAX_OPTIONS_BYTES", "largest JSON-encoded options an analysis may carry", ge=2)
    release_window_seconds: float = env_field(
        1800.0, "CITEQ_RELEASE_WINDOW_SECONDS", "how long a held run's failed release is retried before "
        "the job fails", gt=0)
    release_backoff_base: float = env_field(
        5.0, "CITEQ_RELEASE_BACKOFF_BASE", "first release-retry delay; doubles per attempt, capped, jittered",
        gt=0)
    release_backoff_cap: float = env_field(300.0, "CITEQ_RELEASE_BACKOFF_CAP", "longest release-retry delay",
                                           gt=0)
    release_redispatch_seconds: float = env_field(
        300.0, "CITEQ_RELEASE_REDISPATCH_SECONDS", "a dispatched release retry whose message got lost is "
        "dispatched again after this", gt=0)
    sweep_batch: int = env_field(500, "CITEQ_SWEEP_BATCH", "rows a sweeper handles per tick", ge=1)
    analyze_seconds: float = env_field(
        0.0, "CITEQ_ANALYZE_SECONDS", "duration of the benchmarks' simulated analysis "
        "(CITEQ_ANALYZE_WORK=simulated, scripts/bench_queue.py)", ge=0)
    #: Name of the registered work an analysis does (``analysis.queue.work.register_work``): ``pipeline``
    #: (extract, then judge per citation; registered by the actors); tests and benchmarks
    #: register stand-ins in the modules their workers load.
    analyze_work: str = env_field(
        "pipeline", "CITEQ_ANALYZE_WORK",
        "name of the registered work an analysis does (default: pipeline)")
    release_check: str = env_field(
        "", "CITEQ_RELEASE_CHECK", "name of the registered check of the judge provider before a held run is "
        "released (default: none)")
    batch_linger_seconds: float = env_field(
        0.001, "CITEQ_BATCH_LINGER_SECONDS", "longest a job start or completion waits for its siblings' to "
        "share one statement", ge=0, le=0.1)


class PipelineSettings(EnvSettings):
    """Uploads, parsing, the source cache and judging. Every field has an environment variable,
    except the judge's and the embedder's settings, which it carries (read with it)."""

    max_active_parse_jobs: int = env_field(
        3, "CITEQ_MAX_ACTIVE_PARSE_JOBS", "parse jobs a user may have queued or running at once", ge=1)
    max_staged_bytes: int = env_field(
        120 * 1024 * 1024, "CITEQ_MAX_STAGED_BYTES", "bytes a user may have staged (uploaded, not parsed yet)",
        ge=1)
    max_file_bytes: int = env_field(50 * 1024 * 1024, "CITEQ_MAX_FILE_BYTES", "largest single file accepted",
                                    ge=1)
    max_files_per_upload: int = env_field(50, "CITEQ_MAX_FILES_PER_UPLOAD", "files one upload may carry", ge=1)
    blob_ttl_seconds: float = env_field(
        6 * 3600.0, "CITEQ_BLOB_TTL_SECONDS", "staged bytes older than this are dropped (their item fails)", gt=0)
    parse_max_attempts: int = env_field(
        3, "CITEQ_PARSE_MAX_ATTEMPTS", "parse attempts of one item (a file that kills its worker) before it "
        "fails", ge=1)
    parse_cpu_seconds: float = env_field(
        30.0, "CITEQ_PARSE_CPU_SECONDS", "CPU seconds one document's parse may take (document_too_complex)",
        gt=0)
    parse_memory_mb: int = env_field(
        1024, "CITEQ_PARSE_MEMORY_MB", "address space (MB) of the process parsing one document", ge=64)
    #: About 1,600 pages of prose (a long book is 3 M characters); what the parse sandbox hands the
    #: worker stays this small: three such documents at once keep a worker under 400 MB.
    parse_max_text_chars: int = env_field(
        5_000_000, "CITEQ_PARSE_MAX_TEXT_CHARS", "characters of text one document may hold (more: "
        "document_too_long)", ge=1000)
    parse_wall_seconds: float = env_field(
        90.0, "CITEQ_PARSE_WALL_SECONDS", "wall-clock seconds one document's parse may take", gt=0)
    resend_grace_seconds: float = env_field(
        60.0, "CITEQ_RESEND_GRACE_SECONDS", "a parse job or citation whose message is lost is re-sent after "
        "this", ge=0)
    worker_stale_seconds: float = env_field(
        60.0, "CITEQ_WORKER_STALE_SECONDS", "a worker not heard from for this long no longer counts as online",
        gt=0)
    source_cache_ttl_seconds: float = env_field(
        600.0, "CITEQ_SOURCE_CACHE_TTL_SECONDS", "a process's cached source index is rebuilt after this", gt=0)
    source_cache_size: int = env_field(64, "CITEQ_SOURCE_CACHE_SIZE", "sessions whose index one process keeps",
                                       ge=1)
    passages_per_claim: int = env_field(
        3, "CITEQ_PASSAGES_PER_CLAIM", "passages of the cited source shown to the judge per citation",
        ge=1, le=20)
    judge_concurrency: int = env_field(
        4, "CITEQ_JUDGE_CONCURRENCY", "provider calls in flight at once, across every worker process", ge=1)
    judge_slot_wait_seconds: float = env_field(
        10.0, "CITEQ_JUDGE_SLOT_WAIT_SECONDS", "how long a judge waits for a free provider slot before a new "
        "message takes its citation over", ge=0)
    #: A job ends within this plus one retry backoff (at most 60 s) once every call fails.
    judge_outage_seconds: float = env_field(
        120.0, "CITEQ_JUDGE_OUTAGE_SECONDS", "a job whose judge provider fails every call (5xx, unreachable) "
        "for this long fails provider_unavailable and is refunded", gt=0)
    judge_max_dispatches: int = env_field(
        3, "CITEQ_JUDGE_MAX_DISPATCHES", "dispatches of one citation's judge message before the job fails",
        ge=1)
    judge_factory: str = env_field(
        "", "CITEQ_JUDGE_FACTORY", "name of a registered judge factory (default: the judge of CITEQ_JUDGE)")
    judge_token_budget: int = env_field(
        500_000, "CITEQ_JUDGE_TOKEN_BUDGET", "provider tokens one job's judge calls may cost (0: no limit)", ge=0)
    #: Not variables of their own: the judge's and the embedder's settings, read with these.
    judge: JudgeSettings = Field(default_factory=JudgeSettings, description="the judge's settings")
    embeddings: EmbeddingsSettings = Field(default_factory=EmbeddingsSettings,
                                           description="the embedder's settings")

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: object):
        """The settings from ``env`` (default: the process environment), the judge's and the
        embedder's with them; non-None overrides win."""
        overrides.setdefault("judge", JudgeSettings.from_env(env))
        overrides.setdefault("embeddings", EmbeddingsSettings.from_env(env))
        return super().from_env(env, **overrides)
