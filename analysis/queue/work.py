"""Job work and release checks, registered by name in each process.

A worker chooses the work an analysis does (``CITEQ_ANALYZE_WORK``) and the check a held
run passes before its release (``CITEQ_RELEASE_CHECK``) by name; the actors register the
pipeline, tests and benchmarks register stand-ins in a module the worker loads beside the
actors. The queue service (:mod:`analysis.queue.userqueue`) looks them up when it runs a job.
"""

from __future__ import annotations

from collections.abc import Callable
from analysis.queue.jobs import Job, Outcome
from analysis.settings import QueueSettings

#: What a job's work is: it gets the job and the queue settings and returns an outcome
#: (None: succeeded); an exception fails the job.
Work = Callable[[Job, QueueSettings], "Outcome | None"]
#: Checks the judge provider before a held run is released; raises
#: :class:`~analysis.errors.TransientReleaseError` while it is unavailable.
ReleaseCheck = Callable[[Job], None]

#: Work by name; ``CITEQ_ANALYZE_WORK`` chooses one. The actors register the pipeline
#: (``pipeline``); tests and benchmarks register their stand-ins in a module the worker
#: loads next to the actors (``dramatiq actors tests.e2e.hooks``).
WORKLOADS: dict[str, Work] = {}
#: Release checks by name; ``CITEQ_RELEASE_CHECK`` chooses one (empty: no check, the
#: offline judge needs no provider).
RELEASE_CHECKS: dict[str, ReleaseCheck] = {}


def register_work(name: str, work: Work) -> Work:
    """Make ``work`` the job work named ``name`` in this process (``CITEQ_ANALYZE_WORK``)."""
    WORKLOADS[name] = work
    return work


def register_release_check(name: str, check: ReleaseCheck) -> ReleaseCheck:
    """Make ``check`` the release check named ``name`` in this process (``CITEQ_RELEASE_CHECK``)."""
    RELEASE_CHECKS[name] = check
    return check


def registered(registry: dict[str, Callable], kind: str, name: str) -> Callable:
    try:
        return registry[name]
    except KeyError:
        raise LookupError(f"no {kind} is registered as {name!r} in this process (registered: "
                          f"{', '.join(sorted(registry)) or 'none'})") from None
