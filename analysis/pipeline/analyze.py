"""The analysis pipeline: extract citations, fan out one judge message per citation, and
end the job when the last verdict lands — exactly once, whichever worker that is.

    analyze (serialized, per user) ──▶ run_analysis: extract, persist job_citations,
        send judge_citation × n in the same transaction; returns Outcome.deferred()
    judge_citation (any worker, any order) ──▶ judge_citation: retrieve, judge, write the
        verdict WHERE verdict IS NULL and count it off the job in one statement; the judge
        that counts the last one returns Outcome.succeeded() to the queue's ``settle``,
        which ends the job in that same transaction

The pipeline never changes a job's status itself: it returns outcomes, and the queue
service (analysis/queue/userqueue.py) applies them — ``run_analysis``'s to the analyze
message's middleware, the judge steps' through the ``settle`` they are given.

A re-delivered analyze message finds the extraction recorded and sends nothing; a
re-delivered judge message finds the verdict written and does nothing. A delta re-check
judges only citations whose claim text or cited source (by content hash) changed since
its base job and copies the other verdicts.

Retrieval takes ``passages_per_claim`` passages (default 3; see analysis/pipeline/retrieval/index.py for
why three) of the cited source for a provider judge, and at least `OFFLINE_PASSAGES` for the
offline judge, which costs no tokens. It is hybrid — BM25 and vector ranks fused — when there
is an embedder (CITEQ_EMBEDDER: the bundled local model by default) and the source's chunks
carry embeddings; else BM25 alone. Vectors are ranked by pgvector when the extension is
installed in the database, else by the worker over the chunks its source cache holds. With an
embedder, the first passage also carries the evidence sentence of the whole source.
:func:`retrieval_mode` records per job which mode its sources allowed.
"""

from __future__ import annotations

import json
import logging
import random
import weakref
from collections import defaultdict
from collections.abc import Callable, Sequence
from datetime import datetime

from pydantic import BaseModel

from analysis import db, messages
from analysis.pipeline.providers import budget
from analysis.pipeline.citations import Citation, SourceInfo, SourceMatch, extract_citations, resolve_sources
from analysis.pipeline.documents.readers import stored_document
from analysis.queue.jobs import Job, Outcome
from analysis.pipeline.retrieval import evidence
from analysis.pipeline.retrieval.embeddings import Embedder, embedder_for
from analysis.pipeline.judging.offline import OfflineJudge
from analysis.pipeline.judging.registry import judge_factory, judge_from_settings
from analysis.pipeline.judging.verdicts import Judge, Judgement, Verdict, source_missing_judgement
from analysis.pipeline.providers.errors import (ProviderError, ProviderPermanentError, ProviderRateLimited,
                                                ProviderRejected, ProviderUnavailable)
from analysis.pipeline.documents.pdftext import Page
from analysis.pipeline.retrieval.index import FUSION_DEPTH, Hit, fuse_ranks
from analysis.settings import PipelineSettings, QueueSettings
from analysis.pipeline.retrieval.sources import SourceStore, document_index, store_for

logger = logging.getLogger(__name__)

JUDGE_ACTOR = "judge_citation"
JUDGE_QUEUE = "judge"


class ProviderBusy(Exception):
    """The provider rate-limited us, or its daily budget is spent: retry the message later.
    (Slots that stay taken are not this: see :class:`budget.SlotsTaken`.)"""


class CitationView(BaseModel):
    """One claim–citation pair of an analysis with its verdict (None while unjudged)."""

    ordinal: int
    claim: str
    marker: str
    page: int | None
    source_document_id: int | None
    verdict: str | None
    confidence: float | None
    evidence: str | None
    evidence_page: int | None
    rationale: str | None
    #: True when a delta re-check copied the verdict from its base job.
    carried_over: bool
    judged_at: datetime | None = None
    #: the offline judge's rule that decided (None for a model judge or a missing source)
    rule: str | None = None


# -- the analyze step -----------------------------------------------------------------------


def run_analysis(job: Job, settings: QueueSettings, *, pipeline_settings: PipelineSettings, broker=None) -> Outcome:
    """The ``analyze`` work: extract and fan out; ``deferred`` while citations await a judge,
    ``succeeded`` when nothing is left to judge (the queue then ends the job at once).

    The actors register it with the queue as the work named ``pipeline`` (the default of
    ``CITEQ_ANALYZE_WORK``), with the worker's pipeline settings bound.
    """
    broker = messages.broker_or_global(broker)
    done, pending = db.one_on(broker, "job_extraction_one", job_id=job.id)
    if not done:
        pending = extract(job, settings=pipeline_settings, broker=broker)
    return Outcome.deferred() if pending else Outcome.succeeded()


def extract(job: Job, *, settings: PipelineSettings, broker=None) -> int:
    """Find the thesis's citations, persist them, send their judge messages (one
    transaction); the number left to judge. A second call for the job sends nothing."""
    broker = messages.broker_or_global(broker)
    pages = [Page(number=p, text=t) for p, t in
             db.many_on(broker, "document_pages_many", user_id=job.user_id, document_id=job.thesis_id)]
    stored = db.one_on(broker, "document_structure_one", user_id=job.user_id, document_id=job.thesis_id)
    citations = extract_citations(stored_document(pages, stored[0] if stored else None))
    sources = db.many_on(broker, "job_sources_many", job_id=job.id)
    infos = [SourceInfo(id=str(s[0]), filename=s[1], text=s[2], metadata=_source_metadata(s[3], s[4]))
             for s in sources]
    resolved = resolve_sources(citations, infos)
    matched = {o: (int(m.source_id) if m.source_id is not None else None) for o, m in resolved.items()}
    carried = _carried_verdicts(job, citations, matched, broker) if job.is_delta else {}
    rows, judge_messages = _citation_rows(job, citations, matched, carried, broker, resolved)
    pending = len(judge_messages)
    with broker.transaction() as cur:
        if db.one(cur, "job_extracted_one", job_id=job.id, total=len(citations), pending=pending,
                  retrieval_mode=retrieval_mode(cur, job.id, settings), judge=judge_name(settings)) is None:
            return db.one(cur, "job_extraction_one", job_id=job.id)[1] or 0
        if citations:  # a thesis without citations succeeds with an empty report (issue 29)
            db.one(cur, "citations_insert", job_id=job.id, user_id=job.user_id, **rows)
        if judge_messages:
            broker.enqueue_many(judge_messages)
    logger.info("citations extracted", extra={"action": "citations_extracted", "job_id": job.id,
                                              "user_id": job.user_id, "citations": len(citations),
                                              "to_judge": pending, "carried_over": len(carried)})
    return pending


def _source_metadata(doi: str | None, metadata: dict | None) -> dict[str, str]:
    meta = {k: str(v) for k, v in (metadata or {}).items()}
    if doi:
        meta["doi"] = doi
    return meta


def _citation_rows(job: Job, citations: list[Citation], matched: dict[int, int | None],
                   carried: dict[int, tuple], broker,
                   resolved: dict[int, SourceMatch]) -> tuple[dict[str, list], list]:
    """Column arrays for ``citations_insert`` and the judge messages to send."""
    actor = broker.get_actor(JUDGE_ACTOR)
    cols: dict[str, list] = defaultdict(list)
    judge_messages = []
    for c in citations:
        source = matched[c.ordinal]
        verdict = None
        if source is None:
            j = source_missing_judgement(c.marker)
            verdict = (None, j.verdict.value, j.confidence, j.evidence, j.evidence_page, j.rationale, j.rule, None)
        elif c.ordinal in carried:
            verdict = carried[c.ordinal]
        message_id = None
        if verdict is None:
            message = actor.message(job.id, c.ordinal)
            judge_messages.append(message)
            message_id = message.message_id
        carried_from, v, confidence, evidence, evidence_page, rationale, rule, parts = verdict or (None,) * 8
        for name, value in (
            ("ordinals", c.ordinal), ("claims", c.claim), ("sentences", c.sentence), ("markers", c.marker),
            ("pages", c.page), ("reference_keys", c.reference.key if c.reference else None),
            ("references", c.reference.model_dump_json() if c.reference else None),
            ("source_document_ids", source), ("message_ids", message_id), ("verdicts", v),
            ("confidences", confidence), ("evidences", evidence), ("evidence_pages", evidence_page),
            ("rationales", rationale), ("carried_from_ids", carried_from), ("judge_rules", rule),
            ("evidence_parts", None if parts is None else json.dumps(parts)),
            ("match_methods", resolved[c.ordinal].method if source is not None else None),
            ("unresolved_reasons", resolved[c.ordinal].reason if source is None else None),
        ):
            cols[name].append(value)
    return dict(cols), judge_messages


def _carried_verdicts(job: Job, citations: list[Citation], matched: dict[int, int | None],
                      broker) -> dict[int, tuple]:
    """Verdicts of the base job to copy: same marker, same claim text, same cited content.

    Sources are compared by content hash, so a re-uploaded identical file counts as
    unchanged and an edited one as changed. Repeated (marker, claim) pairs pair up in order.
    """
    base = db.many_on(broker, "base_citations_many", job_id=job.delta_of_job_id, user_id=job.user_id)
    ids = [s for s in matched.values() if s is not None]
    hashes = dict(db.many_on(broker, "document_hashes_many", user_id=job.user_id, ids=ids)) if ids else {}
    available: dict[tuple[str, str], list[tuple]] = defaultdict(list)
    for row in base:
        available[(row[3], row[2])].append(row)
    carried = {}
    for c in citations:
        candidates = available.get((c.marker, c.claim))
        if not candidates:
            continue
        row = candidates.pop(0)
        source = matched[c.ordinal]
        if source is None or row[6] is None or hashes.get(source) != row[5] or row[5] is None:
            continue
        carried[c.ordinal] = (row[0], row[6], row[7], row[8], row[9], row[10], row[11], row[12])
    return carried


def retrieval_mode(cur, job_id: int, settings: PipelineSettings) -> str:
    """How the job's citations are retrieved: ``hybrid`` when there is an embedder and
    every source of the job has embedded chunks, ``bm25`` when none has (or there is no
    embedder), ``hybrid (k of n sources embedded)`` in between."""
    if configured_embedder(settings) is None:
        return "bm25"
    total, embedded = db.one(cur, "job_sources_embedded_one", job_id=job_id)
    if embedded == 0:
        return "bm25"
    return "hybrid" if embedded == total else f"hybrid ({embedded} of {total} sources embedded)"


def configured_embedder(settings: PipelineSettings) -> Embedder | None:
    """The embedder of these settings (CITEQ_EMBEDDER, CITEQ_EMBEDDINGS_*), or None. A configuration error
    is logged and means BM25 alone: retrieval must not stop over an optional feature."""
    try:
        return embedder_for(settings.embeddings, settings.judge)
    except ValueError as exc:
        logger.error("embeddings misconfigured", extra={"action": "embeddings_misconfigured", "reason": str(exc)})
        return None


def vectors_in_postgres(broker) -> bool:
    """Whether pgvector is installed here, so vectors are ranked in Postgres.

    Asked once per broker and process, not once per citation (a round trip of every judge's
    ~10; issue 29): an extension is installed or dropped by an operator or a migration, and a
    worker started before keeps the way it ranked, which is correct either way."""
    known = _pgvector.get(broker)
    if known is None:
        known = _pgvector[broker] = bool(db.one_on(broker, "pgvector_available_one")[0])
    return known


_pgvector: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


# -- the judge step -------------------------------------------------------------------------


#: The queue's :func:`~analysis.queue.userqueue.settle`: runs a step that may end the job
#: (job id, user id, step) in a transaction under the user's lock and applies the outcome
#: the step returns. Handed in by the caller (the judge actor), so the pipeline needs no
#: import of the queue service.
Settle = Callable[[int, int, Callable[[object], "Outcome | None"]], "Outcome | None"]


def judge_citation(job_id: int, ordinal: int, *, settle: Settle, broker=None, judge: Judge | None = None,
                   store: SourceStore | None = None, settings: PipelineSettings,
                   embedder: Embedder | None = None) -> str:
    """Judge one citation (idempotent); what happened: ``judged``, ``completed`` (this was
    the last verdict and the job finished), ``skipped`` (judged already, job ended),
    ``failed`` (the provider refuses the configuration: the job failed and was refunded), or
    ``waiting`` (every provider slot stayed taken: a new message tries again shortly).
    The outcomes that end the job go through ``settle``."""
    broker = messages.broker_or_global(broker)
    start = ordinal - ordinal % EMBED_WINDOW
    row = db.one_on(broker, "citation_to_judge_one", job_id=job_id, ordinal=ordinal,
                    window_start=start, window_end=start + EMBED_WINDOW)
    if row is None:
        return "skipped"
    _, user_id, claim, marker, source_id, session_id, window_claims = row
    if source_id is None:
        judgement = source_missing_judgement(marker)
    else:
        judge = judge or judge_for(settings)
        hits = retrieve(broker, claim, user_id, session_id, source_id, passages_for(judge, settings),
                        store=store or store_for(broker, settings), embedder=embedder or configured_embedder(settings),
                        claims_ahead=window_claims)
        try:
            judgement = _judge_within_budget(judge, job_id, claim, hits, broker, settings)
        except ProviderPermanentError as exc:
            return fail_for_provider(job_id, user_id, exc, settle=settle, broker=broker)
        except ProviderUnavailable as exc:
            return provider_failing(job_id, user_id, exc, settle=settle, broker=broker, settings=settings)
        except budget.SlotsTaken as exc:
            logger.info("judge waits for a provider slot", extra={"action": "judge_requeued", "job_id": job_id,
                                                                 "ordinal": ordinal, "reason": str(exc)})
            return _requeue(broker, job_id, ordinal, random.randint(500, 2000))
        return record_verdict(job_id, ordinal, user_id, judgement, settle=settle, broker=broker,
                              provider_answered=not isinstance(judge, OfflineJudge) and bool(hits))
    return record_verdict(job_id, ordinal, user_id, judgement, settle=settle, broker=broker)


#: Passages the offline judge reads per claim: it costs no tokens, and a paraphrase's sentence is
#: often not among the provider judge's few (on a small source this is every passage).
OFFLINE_PASSAGES = 12
#: A judge embeds the claims of its window of this many ordinals in one batch (the local
#: embedder's batch); the other judges of the window find their claims' vectors remembered.
EMBED_WINDOW = 32


def passages_for(judge: Judge, settings: PipelineSettings) -> int:
    """How many passages a judge reads per claim: ``passages_per_claim`` for a provider judge
    (its prompt), at least `OFFLINE_PASSAGES` for the offline judge."""
    if isinstance(judge, OfflineJudge):
        return max(settings.passages_per_claim, OFFLINE_PASSAGES)
    return settings.passages_per_claim


def _judge_within_budget(judge: Judge, job_id: int, claim: str, hits: list[Hit], broker,
                         settings: PipelineSettings) -> Judgement:
    """The judgement of a provider judge, unless the job's token budget is spent (then
    `uncertain` without a call); the tokens it cost are counted against the job at once.

    Calls in flight when the budget runs out still land, so a job can overshoot it by up to
    `judge_concurrency` calls. A request the provider refuses for this citation alone (a 4xx
    that is not permanent) is `uncertain` with the provider's reason; permanent errors raise.
    """
    metered = not isinstance(judge, OfflineJudge) and bool(hits)
    if metered and settings.judge_token_budget:
        used = db.one_on(broker, "job_judge_tokens_one", job_id=job_id)[0]
        if used >= settings.judge_token_budget:
            return Judgement(verdict=Verdict.uncertain, confidence=0.0, evidence=hits[0].text,
                             evidence_page=hits[0].page,
                             rationale=f"Not judged: the token budget of the job spent "
                                       f"({used:,} of {settings.judge_token_budget:,} tokens).")
    try:
        judgement = _judge_guarded(judge, claim, hits, broker, settings)
    except ProviderPermanentError:
        raise
    except ProviderRejected as exc:
        return Judgement(verdict=Verdict.uncertain, confidence=0.0, evidence=hits[0].text if hits else None,
                         evidence_page=hits[0].page if hits else None,
                         rationale=f"Not judged: the provider refused this citation's request ({exc}).")
    if judgement.tokens:
        db.one_on(broker, "job_judge_tokens_add_one", job_id=job_id, tokens=judgement.tokens)
    return judgement


def fail_for_provider(job_id: int, user_id: int, exc: ProviderPermanentError, *, settle: Settle,
                      broker=None) -> str:
    """Fail the job at once with the error's typed reason (``provider_auth_failed``,
    ``provider_model_not_found``) and refund it: no call of this configuration can succeed,
    so its other citations must not burn retries. ``failed``, or ``skipped`` when the job had
    ended already (another citation's judge failed it first)."""
    reason = f"{exc.code}: {exc}"[:500]  # the message is redacted and clipped where it was raised
    failed = settle(job_id, user_id, lambda cur: Outcome.failed(reason), broker=messages.broker_or_global(broker))
    logger.error("judge provider refuses this configuration", extra={
        "action": "job_failed_provider", "job_id": job_id, "user_id": user_id, "reason": reason})
    return "failed" if failed is not None else "skipped"


#: The failure reason of a job whose judge provider stayed unavailable.
PROVIDER_UNAVAILABLE = "provider_unavailable"


def provider_failing(job_id: int, user_id: int, exc: ProviderUnavailable, *, settle: Settle, broker=None,
                     settings: PipelineSettings, now: datetime | None = None) -> str:
    """A transient provider failure (5xx, unreachable): raised again to be retried while the
    provider has failed the job for less than ``judge_outage_seconds`` since its last provider
    verdict; after that the job fails ``provider_unavailable`` and is refunded (``failed``),
    so an outage ends a job within the window plus one retry backoff instead of leaving it
    ``running`` through every retry and re-dispatch. ``skipped``: the job had ended."""
    broker = messages.broker_or_global(broker)
    row = db.one_on(broker, "job_provider_failing_one", job_id=job_id, now=now)
    if row is None:
        return "skipped"
    (seconds,) = row
    if seconds < settings.judge_outage_seconds:
        raise exc
    reason = (f"{PROVIDER_UNAVAILABLE}: the judge provider failed every call for {seconds:.0f} s "
              f"(last: {exc})")[:500]  # the message is redacted and clipped where it was raised
    failed = settle(job_id, user_id, lambda cur: Outcome.failed(reason), broker=broker)
    logger.error("judge provider unavailable", extra={"action": "job_failed_provider", "job_id": job_id,
                                                      "user_id": user_id, "reason": reason})
    return "failed" if failed is not None else "skipped"


def retrieve(broker, claim: str, user_id: int, session_id: int | None, source_id: int, k: int, *,
             store: SourceStore, embedder: Embedder | None, claims_ahead: Sequence[str] = ()) -> list[Hit]:
    """The ``k`` best passages of the user's cited source: BM25, fused with vector ranks
    when there is an embedder and the source's chunks carry embeddings; with an embedder, the
    first hit also carries the evidence sentence of the whole source (``focus``), and the
    passage holding it is among the hits (analysis/pipeline/retrieval/evidence.py).

    An embedding call that fails for the claim falls back to BM25 without a focus for this
    citation (logged): the verdict stays sound, and a provider outage does not stall the job.
    ``claims_ahead``: other claims of the job that an embedder which remembers its vectors
    (the local one) embeds in the same batch, for their own judges to find.
    """
    in_postgres = embedder is not None and vectors_in_postgres(broker)
    with_embeddings = embedder is not None and not in_postgres
    if session_id is not None:
        index = store.index(user_id, session_id, with_embeddings=with_embeddings)
    else:
        index = document_index(broker, user_id, source_id, with_embeddings=with_embeddings)
    source = str(source_id)
    query = _claim_vector(embedder, claim, user_id, claims_ahead)
    if query is None:
        # a claim sharing no word with its source (another language) still gets its opening passages
        return index.search(claim, source_id=source, k=k) or index.opening(source, k)
    bm25_hits = index.search(claim, source_id=source, k=max(k, FUSION_DEPTH)) or index.opening(source, k)
    if not bm25_hits:
        return []  # the source has no passage here (not the user's, or no longer linked to the session)
    hits = _hybrid(broker, index, bm25_hits, query, user_id, session_id, source_id, k, in_postgres)
    try:
        focus = evidence.nearest_sentence(broker, user_id=user_id, document_id=source_id, query=query,
                                          embedder=embedder, in_postgres=in_postgres)
    except ProviderError as exc:
        logger.warning("source sentences not embedded; no evidence sentence", extra={
            "action": "embedding_failed", "user_id": user_id, "reason": str(exc)})
        return hits
    if focus is None:
        return hits
    holding = evidence.passage_holding(broker, user_id=user_id, document_id=source_id, focus=focus)
    return evidence.with_focus(hits, focus, holding, k)


def _claim_vector(embedder: Embedder | None, claim: str, user_id: int,
                  claims_ahead: Sequence[str] = ()) -> list[float] | None:
    """The claim's query vector, or None without an embedder or when embedding it failed (logged).

    An embedder that remembers its vectors (``remembers``: the local one) gets the claims
    ahead in the same call. A batch of 32 costs the local engine about 0.4 of 32 single calls
    per sentence (58.8 against 138.6 ms measured side by side at a load average of 6), and
    the judges of those claims (in this process) find their vectors remembered. A remote
    embedder gets the claim alone: every text sent there costs."""
    if embedder is None:
        return None
    texts = [claim, *claims_ahead] if getattr(embedder, "remembers", False) else [claim]
    try:
        query = embedder.embed_queries(texts)[0]
    except ProviderError as exc:
        logger.warning("claim not embedded; BM25 alone", extra={"action": "embedding_failed",
                                                               "user_id": user_id, "reason": str(exc)})
        return None
    return query


def _hybrid(broker, index, bm25_hits: list[Hit], query: list[float], user_id: int, session_id: int | None,
            source_id: int, k: int, in_postgres: bool) -> list[Hit]:
    """BM25 and vector ranks of the source's passages fused (BM25 alone where its chunks carry
    no vectors)."""
    depth = max(k, FUSION_DEPTH)
    if in_postgres:
        # no row: no passage of the source carries a vector of this dimension (BM25 alone), which
        # this query answers without a separate "is it embedded" round trip
        rows = db.many_on(broker, "chunks_nearest_many", user_id=user_id, session_id=session_id,
                          document_id=source_id, embedding=evidence.vector_literal(query), k=depth)
        vector_hits = [Hit(passage_id=r[0], source_id=str(r[1]), page=r[2], text=r[3], score=r[4]) for r in rows]
    elif index.has_vectors(str(source_id)):
        vector_hits = index.vector_search(query, source_id=str(source_id), k=depth)
    else:
        vector_hits = []
    if not vector_hits:
        return bm25_hits[:k]
    return fuse_ranks(bm25_hits, vector_hits)[:k]


def _parts_json(judgement: Judgement) -> str | None:
    """The judgement's per-part sentences as stored (NULL for a claim judged whole)."""
    return json.dumps([p.model_dump() for p in judgement.parts]) if judgement.parts else None


def record_verdict(job_id: int, ordinal: int, user_id: int, judgement: Judgement, *, settle: Settle,
                   broker=None, provider_answered: bool = False) -> str:
    """Write the verdict once; the writer of the last one returns ``succeeded`` to ``settle``,
    which ends the job in the same transaction. A verdict the provider gave
    (``provider_answered``) ends the job's provider outage, if one was counting."""
    happened = "skipped"

    def write(cur) -> Outcome | None:
        nonlocal happened
        row = db.one(cur, "citation_judge_one", job_id=job_id, ordinal=ordinal, verdict=judgement.verdict.value,
                     confidence=judgement.confidence, evidence=judgement.evidence,
                     evidence_page=judgement.evidence_page, rationale=judgement.rationale, rule=judgement.rule,
                     evidence_parts=_parts_json(judgement), provider_answered=provider_answered)
        if row is None:
            return None
        (pending,) = row
        if pending > 0:
            happened = "judged"
            return None
        happened = "completed"
        return Outcome.succeeded()

    settle(job_id, user_id, write, broker=messages.broker_or_global(broker))
    if happened == "completed":
        logger.info("analysis judged", extra={"action": "job_judged", "job_id": job_id, "user_id": user_id})
    return happened


def _judge_guarded(judge: Judge, claim: str, hits, broker, settings: PipelineSettings) -> Judgement:
    """Call the judge; a provider's calls take a global slot and count against its budget.

    Raises :class:`budget.SlotsTaken` when no slot came free within the slot wait."""
    if isinstance(judge, OfflineJudge) or not hits:
        return judge.judge(claim, hits)  # no provider call: nothing to meter
    provider = getattr(judge, "provider", "openai")
    slots = budget.ProviderSlots(broker, provider, settings.judge_concurrency)
    with slots.hold(wait_seconds=settings.judge_slot_wait_seconds):
        with broker.connection() as conn, conn.cursor() as cur:
            if not budget.spend(cur, provider):
                raise ProviderBusy(f"the daily budget of {provider} is spent")
        try:
            return judge.judge(claim, hits)
        except ProviderRateLimited as exc:
            raise ProviderBusy(str(exc)) from exc


def _requeue(broker, job_id: int, ordinal: int, delay_ms: int) -> str:
    """Hand the citation to a new judge message due in ``delay_ms``: waiting for a provider
    slot counts neither as a retry nor as a dispatch."""
    message = broker.get_actor(JUDGE_ACTOR).message(job_id, ordinal)
    with broker.transaction() as cur:
        if db.one(cur, "citation_requeue_one", job_id=job_id, ordinal=ordinal,
                  message_id=message.message_id) is None:
            return "skipped"
        broker.enqueue(message, delay=delay_ms)
    return "waiting"


_judges: dict[str, Judge] = {}


def judge_name(settings: PipelineSettings) -> str:
    """What the job records as its judge: ``offline``, ``openai:<model>``, or the class name of
    a plugged-in judge; ``misconfigured`` when the judge cannot be built (judging will fail)."""
    try:
        judge = judge_for(settings)
    except ValueError:
        return "misconfigured"
    return getattr(judge, "name", None) or getattr(getattr(judge, "inner", None), "name", None) \
        or type(judge).__name__


def judge_for(settings: PipelineSettings) -> Judge:
    """The judge of these settings, one per configuration in a process: ``judge_factory`` if
    set, else the judge of ``settings.judge`` (CITEQ_JUDGE)."""
    key = settings.judge_factory or settings.judge.model_dump_json()
    if key not in _judges:
        _judges[key] = judge_factory(settings.judge_factory)() if settings.judge_factory \
            else judge_from_settings(settings.judge)
    return _judges[key]


# -- reading results ------------------------------------------------------------------------


def citations(user_id: int, job_id: int, *, broker=None) -> list[CitationView]:
    """The citations of the user's job with their verdicts, in reading order."""
    cols = list(CitationView.model_fields)
    rows = db.many_on(messages.broker_or_global(broker), "citations_of_job_many", job_id=job_id, user_id=user_id)
    return [CitationView(**dict(zip(cols, r))) for r in rows]
