"""Middleware for serialized actors: the adapter between Dramatiq and the queue service.

An actor declared with ``serialized=True`` takes the job id as its first argument.
Before it runs, the queue service starts the job (a guarded transition that only the
job's own message passes); any other message for the job is skipped, so duplicate
deliveries are harmless (a skipped message that holds a user's turn is released, unless
the turn is its job's). The actor returns the job's :class:`~analysis.queue.jobs.Outcome`
(an exception means failed); the queue service applies it — ends the job and releases the
user's turn, so the user's next job runs, in one transaction — unless it is ``deferred``
(the job stays running until a later step settles it; its message parks, keeping the turn). Delta re-checks pass through the same path but never
block or promote. The middleware decides nothing itself.

The job the actor runs is handed to it through a context variable, as Dramatiq's
``CurrentMessage`` hands the message: :func:`current_job` reads it.
"""

from __future__ import annotations

import logging
import threading
import time
from contextvars import ContextVar

import dramatiq
from dramatiq.middleware import Middleware, SkipMessage

from analysis.queue import userqueue
from analysis.queue.jobs import Job, Outcome
from analysis.settings import QueueSettings

from . import config
from broker import backoff
from broker.batching import GroupCommit

logger = logging.getLogger(__name__)

#: The started job (the job, its held-run status, the queue settings it started under) of
#: the serialized actor running now: set by the middleware before the actor runs, cleared
#: after it returned. Each worker thread has its own context, so each sees only its own
#: message's job.
_current: ContextVar[tuple[Job, str, QueueSettings] | None] = ContextVar("citeq_serialized_job", default=None)
#: The outcome the running serialized actor handed back (hand_back), for after_process_message.
#: Not the actor's return value: Dramatiq logs a warning for every message whose actor returns
#: a value while no Results middleware is installed.
_outcome: ContextVar[Outcome | None] = ContextVar("citeq_serialized_outcome", default=None)

#: Attempts to write a start or a completion through a database blip before giving up on it.
START_ATTEMPTS = COMPLETE_ATTEMPTS = 3


def current_job() -> tuple[Job, str, QueueSettings]:
    """The job, its held-run status and the queue settings it started under, for the
    serialized actor running now (None outside one)."""
    return _current.get()


def hand_back(outcome: Outcome) -> None:
    """Give the running serialized actor's outcome to the middleware, which applies it when
    the actor returns (an actor that hands back nothing succeeded)."""
    _outcome.set(outcome)


def _start(starts, broker) -> list[tuple[Job, str, QueueSettings] | None]:
    # The worker's settings as the batch starts: every job of a batch starts under the same.
    settings = config.current().queue
    return [None if s is None else (*s, settings) for s in userqueue.start_jobs(starts, broker=broker,
                                                                              settings=settings)]


class SerializedJobs(Middleware):
    """Has the queue service start each serialized message's job, and apply its outcome.

    A worker process's threads start and complete their jobs through two group commits:
    what arrives while a statement is in flight goes together in the next one, so a busy
    process writes one start statement and one completion transaction for many jobs.
    """

    def __init__(self) -> None:
        self._writers: dict[int, tuple[GroupCommit, GroupCommit]] = {}
        self._writers_lock = threading.Lock()

    @property
    def actor_options(self) -> set[str]:
        return {"serialized"}

    def _batches(self, broker) -> tuple[GroupCommit, GroupCommit]:
        with self._writers_lock:
            writers = self._writers.get(id(broker))
            if writers is None:
                linger = config.current().queue.batch_linger_seconds
                writers = self._writers[id(broker)] = (
                    GroupCommit(lambda starts: _start(starts, broker), linger=linger),
                    GroupCommit(lambda completions: userqueue.complete_jobs(completions, broker=broker),
                                linger=linger),
                )
            return writers

    def before_process_message(self, broker, message) -> None:
        _current.set(None)
        _outcome.set(None)
        if not broker.get_actor(message.actor_name).options.get("serialized"):
            return
        job_id = message.args[0]
        started = self._start(broker, job_id, message)
        if started is None and message.options.get("group_key") is not None:
            # A message of the user's turn: its ack would park it. The broker may have given
            # a queued job the turn by itself (then it starts now), else it is stale and is
            # released, so that it never keeps the turn.
            if userqueue.skipped(job_id, message.message_id, broker=broker):
                started = self._start(broker, job_id, message)
        if started is None:
            logger.info("duplicate message skipped", extra={"action": "duplicate_skipped", "job_id": job_id,
                                                            "message_id": message.message_id})
            raise SkipMessage()
        _current.set(started)

    def _start(self, broker, job_id: int, message):
        """Start the job for this message, through database blips.

        A start whose answer was lost may have committed: the job is running then, and only
        its own message can run it. Acking that message would leave the job running with no
        message and no work (issue 11), so a start that keeps failing dead-letters it: the
        resume sweeper re-sends a job still pending, the stall sweeper fails (and refunds) a
        job that did start. Starting again with the same message is harmless: the start
        accepts a re-delivery of the job's own message."""
        for attempt in range(START_ATTEMPTS):
            try:
                return self._batches(broker)[0].submit((job_id, message.message_id))
            except dramatiq.errors.BrokerConnectionError as exc:
                error: Exception = exc
                if attempt + 1 < START_ATTEMPTS:
                    time.sleep(0.2 * 2**attempt)
            except Exception as exc:  # noqa: BLE001 - dead-lettered below, the sweepers take it on
                error = exc
                logger.exception("could not start job %s", job_id)
                break
        logger.error("could not start job %s; dead-lettering its message", job_id)
        message.fail()
        raise SkipMessage(f"could not start job {job_id}: {type(error).__name__}: {error}"[:500])

    def after_process_message(self, broker, message, *, result=None, exception=None) -> None:
        started, handed = _current.get(), _outcome.get()
        _current.set(None)
        _outcome.set(None)
        if started is None:
            return
        job = started[0]
        if exception is not None:
            outcome = Outcome.failed(f"{type(exception).__name__}: {exception}")
        else:
            outcome = handed or Outcome.succeeded()
        if not outcome.ends_job:
            return
        for attempt in range(COMPLETE_ATTEMPTS):
            try:
                self._batches(broker)[1].submit(userqueue.Completion.of(job, outcome))
                return
            except dramatiq.errors.BrokerConnectionError:
                time.sleep(backoff.delay(attempt, first=0.2, cap=5.0, jitter=False))
        # Dead-letter the message: the stall sweeper then fails the job (refunded) and the
        # user's queue moves on, instead of the job staying "running" forever.
        logger.error("could not complete job %s; dead-lettering its message", job.id)
        message.fail()
