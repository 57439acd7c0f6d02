"""Settings of the per-user analysis queue: read from the environment at the edge."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from pydantic import Field

from broker.settings import EnvSettings

#: Environment variable for each setting.
ENVIRONMENT = {
    "job_cost": "CITEQ_JOB_COST",
    "max_active_jobs": "CITEQ_MAX_ACTIVE_JOBS",
    "max_options_bytes": "CITEQ_MAX_OPTIONS_BYTES",
    "judge_provider": "CITEQ_JUDGE",
    "release_window_seconds": "CITEQ_RELEASE_WINDOW_SECONDS",
    "release_backoff_base": "CITEQ_RELEASE_BACKOFF_BASE",
    "release_backoff_cap": "CITEQ_RELEASE_BACKOFF_CAP",
    "release_redispatch_seconds": "CITEQ_RELEASE_REDISPATCH_SECONDS",
    "sweep_batch": "CITEQ_SWEEP_BATCH",
    "analyze_seconds": "CITEQ_ANALYZE_SECONDS",
    "analyze_work": "CITEQ_ANALYZE_WORK",
    "release_check": "CITEQ_RELEASE_CHECK",
    "batch_linger_seconds": "CITEQ_BATCH_LINGER_SECONDS",
}


class QueueSettings(EnvSettings):
    """How admission, release and the sweepers behave. Every field has an environment variable."""

    environment: ClassVar[Mapping[str, str]] = ENVIRONMENT

    #: Credits one analysis costs (a delta re-check costs the same).
    job_cost: int = Field(1, ge=0)
    #: First-pass analyses a user may have queued, pending or running at once.
    max_active_jobs: int = Field(50, ge=1)
    #: Largest JSON-encoded ``options`` an analysis may carry.
    max_options_bytes: int = Field(16 * 1024, ge=2)
    #: The judge provider whose daily budget admission checks: the judge kind of
    #: ``CITEQ_JUDGE`` (offline | openai), the same variable ``judges.judge_from_env`` reads.
    judge_provider: str = "offline"
    #: After the first failed release, how long retries go on before the job fails.
    release_window_seconds: float = Field(1800.0, gt=0)
    #: First release-retry delay; doubles per attempt, capped, with jitter.
    release_backoff_base: float = Field(5.0, gt=0)
    release_backoff_cap: float = Field(300.0, gt=0)
    #: A dispatched release retry whose message got lost is dispatched again after this.
    release_redispatch_seconds: float = Field(300.0, gt=0)
    #: Rows a sweeper handles per tick.
    sweep_batch: int = Field(500, ge=1)
    #: Duration of the benchmarks' simulated analysis (``analyze_work=simulated``, scripts/bench_queue.py).
    analyze_seconds: float = Field(0.0, ge=0)
    #: Name of the registered work an analysis does (``userqueue.register_work``): ``pipeline``
    #: (extract, then judge per citation; registered by the actors); tests and benchmarks
    #: register stand-ins in the modules their workers load.
    analyze_work: str = "pipeline"
    #: Name of the registered check of the judge provider before a held run is released
    #: (``userqueue.register_release_check``); empty: none.
    release_check: str = ""
    #: Longest a worker thread's job start or completion waits for its siblings' to share
    #: one statement (only while recent batches were bigger: ``broker.batching``).
    batch_linger_seconds: float = Field(0.001, ge=0, le=0.1)



PIPELINE_ENVIRONMENT = {
    "max_active_parse_jobs": "CITEQ_MAX_ACTIVE_PARSE_JOBS",
    "max_staged_bytes": "CITEQ_MAX_STAGED_BYTES",
    "max_file_bytes": "CITEQ_MAX_FILE_BYTES",
    "max_files_per_upload": "CITEQ_MAX_FILES_PER_UPLOAD",
    "blob_ttl_seconds": "CITEQ_BLOB_TTL_SECONDS",
    "parse_max_attempts": "CITEQ_PARSE_MAX_ATTEMPTS",
    "parse_cpu_seconds": "CITEQ_PARSE_CPU_SECONDS",
    "parse_memory_mb": "CITEQ_PARSE_MEMORY_MB",
    "parse_wall_seconds": "CITEQ_PARSE_WALL_SECONDS",
    "resend_grace_seconds": "CITEQ_RESEND_GRACE_SECONDS",
    "worker_stale_seconds": "CITEQ_WORKER_STALE_SECONDS",
    "source_cache_ttl_seconds": "CITEQ_SOURCE_CACHE_TTL_SECONDS",
    "source_cache_size": "CITEQ_SOURCE_CACHE_SIZE",
    "passages_per_claim": "CITEQ_PASSAGES_PER_CLAIM",
    "judge_concurrency": "CITEQ_JUDGE_CONCURRENCY",
    "judge_slot_wait_seconds": "CITEQ_JUDGE_SLOT_WAIT_SECONDS",
    "judge_max_dispatches": "CITEQ_JUDGE_MAX_DISPATCHES",
    "judge_factory": "CITEQ_JUDGE_FACTORY",
    "judge_token_budget": "CITEQ_JUDGE_TOKEN_BUDGET",
}


class PipelineSettings(EnvSettings):
    """Uploads, parsing, the source cache and judging. Every field has an environment variable."""

    environment: ClassVar[Mapping[str, str]] = PIPELINE_ENVIRONMENT

    #: Parse jobs a user may have queued or running at once.
    max_active_parse_jobs: int = Field(3, ge=1)
    #: Bytes a user may have staged (uploaded, not parsed yet) at once.
    max_staged_bytes: int = Field(120 * 1024 * 1024, ge=1)
    #: Largest single file accepted.
    max_file_bytes: int = Field(50 * 1024 * 1024, ge=1)
    #: Files one upload may carry.
    max_files_per_upload: int = Field(50, ge=1)
    #: Staged bytes older than this are dropped by the blob-TTL sweeper (their item fails).
    blob_ttl_seconds: float = Field(6 * 3600.0, gt=0)
    #: Parse attempts of one item (a file that kills its worker) before it fails.
    parse_max_attempts: int = Field(3, ge=1)
    #: CPU seconds the parser may spend on one document before it fails ``document_too_complex``.
    parse_cpu_seconds: float = Field(30.0, gt=0)
    #: Address space (MB) of the process parsing one document; over it, ``document_too_complex``.
    parse_memory_mb: int = Field(1024, ge=64)
    #: Wall-clock seconds one document's parse may take (a stalled parser is stopped too).
    parse_wall_seconds: float = Field(90.0, gt=0)
    #: A parse job or citation whose message is lost is re-sent by the stall sweeper after this long.
    resend_grace_seconds: float = Field(60.0, ge=0)
    #: A worker not heard from for this long no longer counts as online.
    worker_stale_seconds: float = Field(60.0, gt=0)
    #: A process's cached source index is rebuilt after this long (or when the session changed).
    source_cache_ttl_seconds: float = Field(600.0, gt=0)
    #: Sessions whose index one process keeps.
    source_cache_size: int = Field(64, ge=1)
    #: Passages of the cited source shown to the judge per citation (see analysis/pipeline/retrieval.py).
    passages_per_claim: int = Field(3, ge=1, le=20)
    #: Provider calls in flight at once, across every worker process.
    judge_concurrency: int = Field(4, ge=1)
    #: How long a judge waits for a free provider slot before a new message takes its citation
    #: over (waiting burns no retry).
    judge_slot_wait_seconds: float = Field(10.0, ge=0)
    #: Dispatches of one citation's judge message before the stall sweeper fails the job.
    judge_max_dispatches: int = Field(3, ge=1)
    #: Name of a registered judge factory (``judges.register_judge_factory``); empty means
    #: ``judges.judge_from_env``.
    judge_factory: str = ""
    #: Provider tokens (usage.total_tokens) one job's judge calls may cost; once spent, the
    #: job's remaining citations are `uncertain` without a call. 0 means no limit.
    judge_token_budget: int = Field(500_000, ge=0)

