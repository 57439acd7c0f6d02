"""Settings of the per-user analysis queue: read from the environment at the edge."""

from __future__ import annotations

import os
from collections.abc import Mapping

from pydantic import BaseModel, Field

#: Environment variable for each setting.
ENVIRONMENT = {
    "job_cost": "CITEQ_JOB_COST",
    "max_active_jobs": "CITEQ_MAX_ACTIVE_JOBS",
    "max_options_bytes": "CITEQ_MAX_OPTIONS_BYTES",
    "judge_provider": "CITEQ_JUDGE_PROVIDER",
    "release_window_seconds": "CITEQ_RELEASE_WINDOW_SECONDS",
    "release_backoff_base": "CITEQ_RELEASE_BACKOFF_BASE",
    "release_backoff_cap": "CITEQ_RELEASE_BACKOFF_CAP",
    "release_redispatch_seconds": "CITEQ_RELEASE_REDISPATCH_SECONDS",
    "sweep_batch": "CITEQ_SWEEP_BATCH",
    "analyze_seconds": "CITEQ_ANALYZE_SECONDS",
    "analyze_work": "CITEQ_ANALYZE_WORK",
    "release_check": "CITEQ_RELEASE_CHECK",
}


class QueueSettings(BaseModel):
    """How admission, release and the sweepers behave. Every field has an environment variable."""

    #: Credits one analysis costs (a delta re-check costs the same).
    job_cost: int = Field(1, ge=0)
    #: First-pass analyses a user may have queued, pending or running at once.
    max_active_jobs: int = Field(50, ge=1)
    #: Largest JSON-encoded ``options`` an analysis may carry.
    max_options_bytes: int = Field(16 * 1024, ge=2)
    #: The judge provider whose daily budget admission checks.
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
    #: Duration of the built-in simulated analysis (the default work until the pipeline plugs in).
    analyze_seconds: float = Field(0.0, ge=0)
    #: ``module:function`` doing an analysis' work; empty means the simulated run.
    analyze_work: str = ""
    #: ``module:function`` checking the judge provider before a held run is released.
    release_check: str = ""

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: object) -> "QueueSettings":
        env = os.environ if env is None else env
        values = {field: env[var] for field, var in ENVIRONMENT.items() if env.get(var)}
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)
