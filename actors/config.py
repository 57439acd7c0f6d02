"""The worker process's settings: read once, at the process's edge, and handed down by the actors.

An actor takes only its message's arguments, so the settings it passes to analysis/ live
here, in the one process-level holder of the worker (and of the scheduler, which imports the
same package). ``actors/__init__.py`` fills it when the process imports ``actors`` — what
``dramatiq actors`` and ``periodiq actors`` do at start — and every actor and the
serialized-jobs middleware read :func:`current`. Nothing below actors/ reads the environment.

Tests that run the actors in-process with other settings :func:`configure` the holder with
the settings they want; ``configure()`` with none reads the environment again.
tests/conftest.py does that after every test, so no test's settings leak into the next.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from analysis.settings import PipelineSettings, QueueSettings


@dataclass(frozen=True)
class WorkerSettings:
    """Everything the actors hand down: the queue's settings and the pipeline's."""

    queue: QueueSettings
    pipeline: PipelineSettings

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> WorkerSettings:
        """The settings from ``env`` (default: the process environment)."""
        return cls(queue=QueueSettings.from_env(env), pipeline=PipelineSettings.from_env(env))

    def but(self, *, queue: dict | None = None, pipeline: dict | None = None) -> WorkerSettings:
        """These settings with some fields changed (``but(queue={"job_cost": 2})``), validated."""
        return replace(self, queue=QueueSettings(**{**self.queue.model_dump(), **(queue or {})}),
                       pipeline=PipelineSettings(**{**self.pipeline.model_dump(), **(pipeline or {})}))


_settings: WorkerSettings | None = None


def configure(settings: WorkerSettings | None = None) -> WorkerSettings:
    """Install ``settings`` as this process's (None: read them from the environment now)."""
    global _settings
    _settings = settings if settings is not None else WorkerSettings.from_env()
    return _settings


def current() -> WorkerSettings:
    """This process's settings (read from the environment on first use if none were installed)."""
    return _settings if _settings is not None else configure()
