"""The queue service: the one owner of an analysis job's lifecycle.

Every change of a job's status is made here — admit, start, run, finish, promote, cancel,
and the sweeps' transitions (resend, release retry, fail lost work). The Dramatiq
middleware (actors/serialized.py) only adapts: it starts the jobs of the messages it is
handed and passes on the :class:`~analysis.queue.jobs.Outcome` the work returned. The work
itself (the pipeline, or a test's stand-in) is registered by name
(:func:`analysis.queue.work.register_work`) and returns an outcome; a later pipeline step that may end the job
runs through :func:`settle`, which applies the outcome it returns in the step's transaction.

The user's turn is a message group (broker/groups.py, issue 25): a first-pass job's
``analyze`` message is sent at admission, grouped by the user (:func:`turn_key`) with
``group_release="manual"``, so the broker lets one of a user's analyze messages run at a
time, in admission order, and keeps the user's key taken after ``analyze`` returns (its
message parks) until the job ends. Whether that message is born runnable or held IS the
queued-or-pending decision (the admission's INSERT asks the broker's
``citeq_group_has_room`` under the group's lock); when a job ends, the same transaction
releases its message (:func:`_release_turns`), and the messages the broker promotes turn
their jobs from queued to pending. One mechanism: nothing here looks for "the user's next
queued job".

Every admission and every job end runs inside :func:`user_lock`, the one place that names
the user's advisory lock (the group's lock, which the broker owns, is taken after it).
Within them, the database decides: the INSERT decides a new job's status, guarded UPDATEs
and the transitions the schema allows (schema/0016) decide changes, a partial unique index
makes two active first-pass jobs of one user impossible.

Messages are sent by actor name (``analyze``) on the broker passed in (or Dramatiq's global
one), inside the caller's transaction: visible to workers on commit, gone on rollback. The
actors themselves live in ``actors/``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import psycopg2.errors

from broker import locks

from analysis import db, inputs, messages
from analysis.queue import credits, work
from analysis.queue.rows import (
    AdmitRow,
    DeferredRelease,
    DocumentRow,
    FinishedRow,
    JobRow,
    StartedRow,
)
from analysis.errors import (
    BudgetExhausted,
    DocumentNotReady,
    InsufficientCredits,
    InvalidDoi,
    NoSources,
    NotCancelable,
    PayloadTooLarge,
    QueueFull,
    TransientReleaseError,
    UnknownDocument,
    UnknownJob,
    UnknownUser,
)
from analysis.queue.jobs import RELEASE_TIMEOUT, Admission, Job, JobStatus, Outcome
from analysis.settings import QueueSettings

logger = logging.getLogger(__name__)

#: The advisory-lock scope of a user's queue. Only :func:`user_lock` may use it: a second
#: spelling of the key would silently split the lock (a test greps the code for it).
LOCK_SCOPE = "analysis_queue"

ANALYZE_ACTOR = "analyze"


# -- the lock ---------------------------------------------------------------------------


def user_lock(cur, user_id: int) -> None:
    """Serialize with every admission and promotion of this user (until the transaction ends)."""
    locks.xact_lock(cur, LOCK_SCOPE, int(user_id))


def user_lock_text(cur, user_id: int) -> bytes:
    """:func:`user_lock` as a statement to send ahead of another in the same round trip."""
    return locks.xact_lock_text(cur, LOCK_SCOPE, int(user_id))


# -- the user's turn: a message group -------------------------------------------------------


def turn_key(user_id: int) -> str:
    """The message-group key of a user's first-pass analyze messages."""
    return f"user:{int(user_id)}"


def _analyze_queue(broker) -> str:
    return broker.get_actor(ANALYZE_ACTOR).queue_name


def _turns_of(broker, user_ids) -> dict:
    """The parameters naming these users and their groups (jobs_promote_by_message_many)."""
    users = sorted(int(u) for u in user_ids)
    return {"queue_name": _analyze_queue(broker), "group_keys": [turn_key(u) for u in users], "user_ids": users}


def _release_turns(cur, broker, turns: Sequence[tuple[int, str]], via: str) -> list[int]:
    """Inside the users' locks and the caller's transaction: release the analyze messages
    that hold these users' turns ((user id, message id)) and make pending the queued jobs
    whose messages the broker promoted in their place, in one round trip; the promoted
    jobs' ids."""
    if not turns:
        return []
    queue = _analyze_queue(broker)
    release = broker.release_group_messages_text(cur, [m for _, m in turns],
                                                 [(queue, turn_key(u)) for u, _ in turns])
    rows = db.many_after(cur, release, "jobs_promote_by_message_many", **_turns_of(broker, {u for u, _ in turns}),
                         via=via)
    if rows:
        logger.info("analyses promoted", extra={"action": "jobs_promoted", "via": via,
                                                "job_ids": [r[0] for r in rows], "user_ids": [r[1] for r in rows]})
    return [r[0] for r in rows]


def _send_analyze(broker, job_id: int, message_id: str, user_id: int | None) -> None:
    """Send a job's analyze message: grouped by its user (``user_id``; it holds the user's
    turn until released), or ungrouped (None: a delta re-check, a release retry)."""
    messages.send(broker, ANALYZE_ACTOR, args=(job_id,), message_id=message_id,
                  group_key=None if user_id is None else turn_key(user_id))


# -- transactions ------------------------------------------------------------------------


@contextmanager
def _transaction(broker, connection=None) -> Iterator:
    """One transaction: on a pooled connection, or inside the caller's own (not committed here)."""
    if connection is None:
        with broker.transaction() as cur:
            yield cur
        return
    if connection.autocommit:
        raise ValueError("admit(connection=...) needs a connection in a transaction, not autocommit")
    with broker.bind(connection), connection.cursor() as cur:
        yield cur


# -- admission ------------------------------------------------------------------------------


def admit(
    user_id: int,
    thesis_id: int,
    source_ids: Sequence[int],
    *,
    delta_of_job_id: int | None = None,
    idempotency_key: str | None = None,
    options: dict | None = None,
    broker=None,
    connection=None,
    settings: QueueSettings,
) -> Admission:
    """Admit one analysis: validate, hold, charge, enqueue — all or nothing, at the call.

    Runs in one transaction under the user's lock (the caller's transaction when
    ``connection`` is given; then the caller commits). Raises an
    :class:`~analysis.errors.AdmissionError` subclass for anything that can fail
    synchronously, leaving no job, no held run and no charge behind. A repeated
    ``idempotency_key`` returns the first admission (``created=False``).
    """
    broker = messages.broker_or_global(broker)
    request = inputs.validated(inputs.AdmissionInput, user_id=user_id, thesis_id=thesis_id,
                               source_ids=list(source_ids), delta_of_job_id=delta_of_job_id,
                               idempotency_key=idempotency_key, options=options or {})
    user_id, thesis_id, delta_of_job_id = request.user_id, request.thesis_id, request.delta_of_job_id
    source_ids, idempotency_key, options = request.source_ids, request.idempotency_key, request.options
    encoded = json.dumps(options, separators=(",", ":"))
    if len(encoded.encode()) > settings.max_options_bytes:
        raise PayloadTooLarge(size=len(encoded.encode()), limit=settings.max_options_bytes)
    if not source_ids:
        raise NoSources()
    try:
        return _admit(broker, connection, settings, user_id, thesis_id, source_ids, delta_of_job_id,
                      idempotency_key, encoded)
    except psycopg2.errors.CheckViolation as exc:
        if credits.is_overdraft(exc):  # the balance went below the cost since it was read
            raise InsufficientCredits(cost=settings.job_cost) from None
        raise


def _admit(broker, connection, settings: QueueSettings, user_id: int, thesis_id: int, source_ids: list[int],
           delta_of_job_id: int | None, idempotency_key: str | None, encoded: str) -> Admission:
    with _transaction(broker, connection) as cur:
        # Checked before the lock, raised after it: a repeated idempotency key wins, and the
        # errors keep their order (user, credits, then these, then queue and budget).
        refusal = _check_documents(cur, user_id, thesis_id, source_ids, delta_of_job_id)
        message_id = messages.new_message_id()
        # The lock and the statement that decides go in one round trip: the lock is held
        # from its grant to the commit, and that window is what concurrent admits of one
        # user queue behind.
        queue = _analyze_queue(broker)
        lock = user_lock_text(cur, user_id) + b";\n" + locks.group_lock_text(cur, queue, turn_key(user_id))
        admitted = AdmitRow(*db.one_after(
            cur, lock, "job_admit_one", user_id=user_id, thesis_id=thesis_id, group_queue=queue,
            group_key=turn_key(user_id),
            delta_of_job_id=delta_of_job_id, cost=settings.job_cost, message_id=message_id, idempotency_key=idempotency_key,
            options=encoded, document_ids=[thesis_id, *dict.fromkeys(source_ids)], checked=refusal is None,
            max_active_jobs=settings.max_active_jobs, provider=settings.judge_provider,
        ))
        job_id, status = admitted.job_id, admitted.status
        if admitted.existing_id is not None:
            return Admission(job_id=admitted.existing_id, status=JobStatus(admitted.existing_status), created=False)
        if job_id is None:
            raise _refusal(user_id, delta_of_job_id, admitted, refusal, settings)
        credits.charge_at_commit(broker, cur, user_id, job_id, settings.job_cost)
        # Sent whatever the status: the broker holds a queued job's message (the group's
        # lock, taken above, is held to the commit, where the message is written).
        _send_analyze(broker, job_id, message_id, None if delta_of_job_id is not None else user_id)
    logger.info("analysis admitted", extra={"action": "job_admitted", "job_id": job_id, "user_id": user_id,
                                            "status": status, "delta_of_job_id": delta_of_job_id})
    return Admission(job_id=job_id, status=JobStatus(status), created=True)


def _refusal(user_id, delta_of_job_id, facts: AdmitRow, refusal, settings: QueueSettings) -> Exception:
    """The first check that refused an admission, in the order the checks are documented."""
    if facts.balance is None:
        return UnknownUser(user_id=user_id)
    if facts.balance < settings.job_cost:
        return InsufficientCredits(balance=facts.balance, cost=settings.job_cost)
    if refusal is not None:
        return refusal
    if delta_of_job_id is None and facts.active_jobs >= settings.max_active_jobs:
        return QueueFull(active=facts.active_jobs, limit=settings.max_active_jobs)
    if facts.budget_exhausted:
        return BudgetExhausted(provider=settings.judge_provider)
    raise AssertionError("job_admit_one inserted no job, yet every check passed")


def _check_documents(cur, user_id, thesis_id, source_ids, delta_of_job_id) -> Exception | None:
    """The refusal the user's documents (and the delta's original job) call for, or None.

    Runs before the user's lock: documents and jobs of a user change only through their
    own uploads and admissions, not under a running admission's feet.
    """
    rows = [DocumentRow(*r) for r in db.many(cur, "admission_documents_many", user_id=user_id,
                                              delta_of_job_id=delta_of_job_id, ids=[thesis_id, *source_ids])]
    if not rows[0].delta_base_found:
        return UnknownJob(job_id=delta_of_job_id)
    found = {r.id: r for r in rows if r.id is not None}
    expected = [(thesis_id, "thesis"), *((s, "source") for s in source_ids)]
    for doc_id, kind in expected:
        if doc_id not in found or found[doc_id].kind != kind:
            return UnknownDocument(f"document {doc_id} is not a {kind} of this user", document_id=doc_id)
    for doc_id, _ in expected:
        if found[doc_id].status != "parsed":
            return DocumentNotReady(document_id=doc_id, status=found[doc_id].status)
    for doc_id in source_ids:
        doi = found[doc_id].doi
        if doi is not None and not inputs.DOI_PATTERN.match(doi):
            return InvalidDoi(f"source {doc_id} has a malformed DOI: {doi!r}", document_id=doc_id, doi=doi)
    return None


# -- running ----------------------------------------------------------------------------------


def start_job(job_id: int, message_id: str, *, settings: QueueSettings, broker=None) -> tuple[Job, str] | None:
    """Mark the job running for this message; (job, held-run status), or None to skip it.

    Without a configured release check there is nothing to wait for before a release, so
    the held run is released in the same statement (:func:`run_job` then finds it
    ``released``); with one, :func:`run_job` checks and releases.
    """
    return start_jobs([(job_id, message_id)], broker=broker, settings=settings)[0]


def start_jobs(starts: Sequence[tuple[int, str]], *, settings: QueueSettings,
               broker=None) -> list[tuple[Job, str] | None]:
    """:func:`start_job` for many (job id, message id) pairs in one statement, in order."""
    ordered = sorted(starts)  # rows are locked in id order: two batches cannot deadlock
    rows = [StartedRow(*r) for r in db.many_on(
        messages.broker_or_global(broker), "job_start_many", job_ids=[s[0] for s in ordered],
        message_ids=[s[1] for s in ordered], release=not settings.release_check)]
    by_message = {(row.id, row.message_id): row for row in rows}
    started: list[tuple[Job, str] | None] = []
    for job_id, message_id in starts:
        row = by_message.pop((job_id, message_id), None)  # a message twice in one batch starts once
        if row is None:
            started.append(None)
            continue
        started.append((Job(id=row.id, user_id=row.user_id, thesis_id=row.thesis_id,
                            delta_of_job_id=row.delta_of_job_id, options=row.options or {}), row.held_status))
    if rows:
        # One record per batch: a busy worker starts many jobs per statement.
        logger.info("analyses started", extra={"action": "jobs_started", "job_ids": [r.id for r in rows],
                                               "user_ids": [r.user_id for r in rows]})
    return started


def run_job(job: Job, held_status: str, *, settings: QueueSettings, broker=None) -> Outcome:
    """Release the job's held run (once) and do its work: the outcome, for :func:`complete_jobs`.

    The outcome is ``deferred`` (the job stays running) when the release failed
    transiently (the release-retry sweeper tries again) or the held run is no longer
    releasable; the work's own outcome otherwise (a work that returns None succeeded).
    """
    broker = messages.broker_or_global(broker)
    if held_status == "held":
        if not _release(job, broker, settings):
            return Outcome.deferred()
    elif held_status != "released":
        logger.info("held run not releasable", extra={"action": "release_skipped", "job_id": job.id,
                                                      "held_status": held_status})
        return Outcome.deferred()
    return work.registered(work.WORKLOADS, "work", settings.analyze_work)(job, settings) or Outcome.succeeded()


def _release(job: Job, broker, settings: QueueSettings) -> bool:
    """Check the provider and release the held run; False when it must wait (deferred)."""
    if settings.release_check:
        try:
            work.registered(work.RELEASE_CHECKS, "release check", settings.release_check)(job)
        except TransientReleaseError as exc:
            defer_release(job.id, str(exc), broker=broker, settings=settings)
            return False
    if db.one_on(broker, "held_run_release_one", job_id=job.id) is None:
        logger.info("held run expired or was canceled meanwhile", extra={"action": "release_skipped",
                                                                        "job_id": job.id})
        return False
    return True


def defer_release(job_id: int, error: str, *, settings: QueueSettings, now=None, broker=None) -> DeferredRelease | None:
    """Record a failed release and schedule its retry; None when the run is no longer held."""
    row = db.one_on(
        messages.broker_or_global(broker), "held_run_defer_one", job_id=job_id, error=error[:500], now=now,
        window_seconds=settings.release_window_seconds, backoff_base=settings.release_backoff_base,
        backoff_cap=settings.release_backoff_cap,
    )
    if row is None:
        return None
    deferred = DeferredRelease(*row)
    logger.warning("held run release deferred", extra={"action": "release_deferred", "job_id": job_id,
                                                       "attempts": deferred.attempts,
                                                       "next_attempt_at": str(deferred.next_attempt_at)})
    return deferred


@dataclass(frozen=True)
class Completion:
    """A running job's terminal outcome, as :func:`complete_jobs` takes it."""

    job_id: int
    user_id: int
    outcome: JobStatus
    reason: str | None = None

    @classmethod
    def of(cls, job: Job, outcome: Outcome) -> Completion:
        """The completion that applies an outcome that ends the job."""
        if not outcome.ends_job:
            raise ValueError("a deferred outcome does not complete the job")
        return cls(job.id, job.user_id, outcome.status, outcome.reason)


def complete_job(job_id: int, outcome: JobStatus | str, *, reason: str | None = None,
                 user_id: int | None = None, broker=None) -> bool:
    """Finish a running job and, for a first-pass job, release the user's turn (the user's
    next job becomes pending) — in one transaction under the user's lock. A failed job's
    credit is refunded (once).

    Returns False when the job was not running (finished already): completing twice is
    harmless.
    """
    broker = messages.broker_or_global(broker)
    if user_id is None:
        row = db.one_on(broker, "job_get_one", job_id=job_id, user_id=None)
        if row is None:
            raise UnknownJob(job_id=job_id)
        user_id = JobRow(*row).user_id
    return complete_jobs([Completion(job_id, user_id, JobStatus(outcome), reason)], broker=broker)[0]


def complete_jobs(completions: Sequence[Completion], *, broker=None) -> list[bool]:
    """:func:`complete_job` for many jobs (of any users) in one transaction; in order,
    whether each job was running and is now finished.

    One statement finishes every job, one releases the users' turns (the broker promotes
    each freed user's next message), one makes those messages' jobs pending; the users'
    locks are taken first, in one order, then the groups' (in one order): two batches that
    share users cannot deadlock.
    """
    broker = messages.broker_or_global(broker)
    with broker.transaction() as cur:
        return _finish_many_locked(cur, broker, completions,
                                   lock=locks.xact_lock_many_text(cur, LOCK_SCOPE, [c.user_id for c in completions]))


#: A pipeline step that may end its job, run by :func:`settle` inside its transaction
#: (a cursor); what it returns: an outcome, or None for "the job goes on".
Step = Callable[[object], "Outcome | None"]


def settle(job_id: int, user_id: int, step: Step, *, broker=None) -> Outcome | None:
    """Run a step that may end a running job — the judge recording the last verdict, a
    judge failing the job — and apply the outcome it returns, in one transaction under
    the user's lock (taken first, as :func:`complete_jobs` takes it: no lock-order
    deadlock). The step's outcome, or None when the job goes on or had ended already."""
    broker = messages.broker_or_global(broker)
    with broker.transaction() as cur:
        user_lock(cur, user_id)
        outcome = step(cur)
        if outcome is None or not outcome.ends_job:
            return outcome
        ended = _finish_many_locked(cur, broker, [Completion(job_id, user_id, outcome.status, outcome.reason)])[0]
    return outcome if ended else None


def _finish_many_locked(cur, broker, completions: Sequence[Completion], *, lock: bytes | None = None) -> list[bool]:
    """:func:`complete_jobs` inside a transaction that already holds the users' locks (or
    takes them with ``lock``, in the same round trip as the finishing statement)."""
    for c in completions:
        if c.outcome not in (JobStatus.SUCCEEDED, JobStatus.FAILED):
            raise ValueError(f"a running job ends succeeded or failed, not {c.outcome.value}")
    reasons = [c.reason or ("failed" if c.outcome is JobStatus.FAILED else None) for c in completions]
    rows = [FinishedRow(*r) for r in db.many_after(
        cur, lock, "job_finish_many", job_ids=[c.job_id for c in completions],
        user_ids=[c.user_id for c in completions], outcomes=[c.outcome.value for c in completions], reasons=reasons)]
    finished = {row.job_id for row in rows}
    for c in completions:
        if c.job_id in finished and c.outcome is JobStatus.FAILED:
            credits.refund(cur, c.job_id)
    _release_turns(cur, broker, [(r.user_id, r.slot_message_id) for r in rows if r.slot_message_id is not None],
                   via="completion")
    # One record per batch and kind (a busy worker finishes many jobs per transaction).
    for outcome in (JobStatus.SUCCEEDED, JobStatus.FAILED):
        ended = [(c, r) for c, r in zip(completions, reasons) if c.outcome is outcome and c.job_id in finished]
        if ended:
            logger.info("analyses finished", extra={
                "action": "jobs_finished", "outcome": outcome.value, "job_ids": [c.job_id for c, _ in ended],
                "user_ids": [c.user_id for c, _ in ended], "reasons": [r for _, r in ended]})
    answers, seen = [], set()
    for c in completions:
        answers.append(c.job_id in finished and c.job_id not in seen)  # a job twice in one batch ends once
        seen.add(c.job_id)
    return answers


def cancel(job_id: int, *, user_id: int | None = None, broker=None) -> None:
    """Cancel a queued or pending job: refund its credit; the user's queue moves on."""
    broker = messages.broker_or_global(broker)
    with broker.transaction() as cur:
        row = db.one(cur, "job_get_one", job_id=job_id, user_id=user_id)
        if row is None:
            raise UnknownJob(job_id=job_id)
        job = JobRow(*row)
        user_lock(cur, job.user_id)
        canceled = db.one(cur, "job_cancel_one", job_id=job_id)
        if canceled is None:
            raise NotCancelable(job_id=job_id, status=job.status)
        credits.refund(cur, job_id)
        # A queued job's held message is withdrawn; a pending one's gives the turn on.
        _release_turns(cur, broker, [(job.user_id, canceled[1])] if canceled[1] else [], via="cancel")
    logger.info("analysis canceled", extra={"action": "job_canceled", "job_id": job_id, "user_id": job.user_id})


# -- the sweeps' transitions -----------------------------------------------------------------


def _job(cur, job_id: int) -> JobRow | None:
    """The job (any user's), or None when there is none."""
    row = db.one(cur, "job_get_one", job_id=job_id, user_id=None)
    return None if row is None else JobRow(*row)


def resend(job_id: int, old_message_id: str, *, broker=None) -> bool:
    """A pending job whose message is neither queued nor running, or a queued one whose
    message is gone (an operator flushed the queue): whether this call sent it again. A
    message that still holds the user's turn (parked, or dead) is delivered again in its
    place; one that is gone is replaced by a new message (guarded on the old message id, so
    two sweepers never both re-send), grouped by the user for a first-pass job. A queued
    job's new message is decided as at admission (under the group's lock): born runnable,
    the job becomes pending in the same transaction."""
    broker = messages.broker_or_global(broker)
    with broker.transaction() as cur:
        job = _job(cur, job_id)
        if job is None:
            return False
        queue, key = _analyze_queue(broker), turn_key(job.user_id)
        # Under the user's lock (and the group's): two sweeps take turns, and the second finds
        # the message delivered again or replaced (job_resend_one's guards).
        cur.execute(user_lock_text(cur, job.user_id) + b";\n" + locks.group_lock_text(cur, queue, key))
        if job.status == JobStatus.PENDING and broker.redeliver_group_messages(cur, [old_message_id]):
            return True
        message_id = messages.new_message_id()
        row = db.one(cur, "job_resend_one", job_id=job_id, message_id=message_id, old_message_id=old_message_id,
                     group_queue=queue, group_key=key)
        if row is None:
            return False
        _send_analyze(broker, job_id, message_id, None if job.delta_of_job_id is not None else job.user_id)
    return True


def release_ended_turns(ended: Sequence[tuple[int, int, str]], *, broker=None) -> list[int]:
    """Release the turns that ended jobs ((job id, user id, message id)) still hold — their
    end committed without the release — and let the users' next jobs run; the promoted
    jobs. Each user's under the user's lock (a job that ends here has ended: no recheck)."""
    broker = messages.broker_or_global(broker)
    if not ended:
        return []
    with broker.transaction() as cur:
        cur.execute(locks.xact_lock_many_text(cur, LOCK_SCOPE, [u for _, u, _ in ended]))
        return _release_turns(cur, broker, [(u, m) for _, u, m in ended], via="resume")


def adopt_promoted(queued: Sequence[tuple[int, int, str]], *, broker=None) -> list[int]:
    """Queued jobs ((job id, user id, message id)) whose messages the broker promoted outside
    a job's end become pending, under the users' locks; the ones that did."""
    broker = messages.broker_or_global(broker)
    if not queued:
        return []
    with broker.transaction() as cur:
        cur.execute(locks.xact_lock_many_text(cur, LOCK_SCOPE, [u for _, u, _ in queued]))
        rows = db.many(cur, "jobs_promote_by_message_many", **_turns_of(broker, {u for _, u, _ in queued}),
                       via="resume")
    return [r[0] for r in rows]


def skipped(job_id: int, message_id: str, *, broker=None) -> bool:
    """An analyze message of a user's turn that started nothing. Its job is queued: the
    broker gave it the turn by itself (its sweep, after the message holding the turn was
    purged), so the job becomes pending, when nothing of the user's is pending or running,
    and True says "start it again". Otherwise the message is stale (its job ended, was
    canceled, or has another message now) and is released, so it never keeps the turn;
    False. A message that holds the turn of a job waiting for it is left alone."""
    broker = messages.broker_or_global(broker)
    with broker.transaction() as cur:
        job = _job(cur, job_id)
        if job is None:
            return False
        user_lock(cur, job.user_id)
        if db.one(cur, "job_turn_holder_one", job_id=job_id, message_id=message_id) is None:
            _release_turns(cur, broker, [(job.user_id, message_id)], via="completion")
            return False
        return bool(db.many(cur, "jobs_promote_by_message_many", **_turns_of(broker, {job.user_id}), via="resume"))


def retry_release(job_id: int, user_id: int, *, settings: QueueSettings, now=None, broker=None) -> str | None:
    """A due held-run release: ``expired`` (its window is over: the job fails with
    ``release_timeout``, refunded, and the user's queue moves on), ``retried`` (a new,
    ungrouped analyze message tries the release again: the job's first one, parked since
    its release was deferred, still holds the user's turn), or None (another sweep took it)."""
    broker = messages.broker_or_global(broker)
    with broker.transaction() as cur:
        user_lock(cur, user_id)
        message_id = messages.new_message_id()
        row = db.one(cur, "held_run_claim_retry_one", job_id=job_id, now=now, message_id=message_id,
                     redispatch_seconds=settings.release_redispatch_seconds)
        if row is None:
            return None  # another sweep took it, or the job moved on
        (expire,) = row
        if expire:
            ended = _finish_many_locked(cur, broker, [Completion(job_id, user_id, JobStatus.FAILED, RELEASE_TIMEOUT)])
            return "expired" if ended[0] else None
        # Ungrouped: the job's first analyze message, parked, holds the user's turn.
        _send_analyze(broker, job_id, message_id, None)
        return "retried"
