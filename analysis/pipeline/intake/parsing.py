"""The parse step: staged bytes become documents, pages and chunks, linked to the session.

One ``parse`` message per parse job; its items are parsed one by one, each in its own
transaction, so a bad file fails only its item and a crash loses at most the item in
hand. An item found ``running`` again was being parsed by a worker that died; after
``parse_max_attempts`` such starts it fails instead of killing the next worker too.

A file is read by one call, :func:`analysis.pipeline.documents.readers.extract_document` (one reader per
format: PDF, DOCX, Markdown, plain text), into a picklable `Document`: its pages are cut
into passages by :mod:`analysis.pipeline.retrieval.chunking` for retrieval, and its structure (headings,
paragraphs, footnotes) and metadata (PDF /Author, /Title, /CreationDate) are stored with
the document, because citation extraction works from them.
The reader runs in a child process under a CPU-time, memory and wall-clock budget
(:mod:`analysis.pipeline.documents.sandbox`; ``CITEQ_PARSE_CPU_SECONDS``, ``CITEQ_PARSE_MEMORY_MB``,
``CITEQ_PARSE_WALL_SECONDS``): a document over budget fails its item with
``document_too_complex`` and the next item goes on. Its text then loses control characters
(:mod:`analysis.pipeline.documents.cleantext`), whichever reader produced it. A write the database refuses for a
reason that retrying cannot fix fails the item (``document_not_stored``) instead of leaving
it ``running`` to be retried.

With an embedder (analysis/pipeline/retrieval/embeddings.py; the bundled local model by default), a
source's sentences (for the evidence sentence, analysis/pipeline/retrieval/evidence.py) are embedded,
and its passages get the mean of their sentences' vectors, before their transaction — no computation or network call holds a database
transaction open. A thesis is not embedded: nothing searches it. Embeddings only improve
retrieval, so an embedder failure never fails the item: its chunks are stored without
embeddings and retrieval of that document is BM25 alone (its sentences are embedded on first use).
"""

from __future__ import annotations

import json
import logging
import os
import re
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

import psycopg2

from analysis import db, messages
from analysis.pipeline.retrieval.chunking import Passage, split_page_sentences, split_passages
from analysis.inputs import DOI_PATTERN
from analysis.pipeline.citations import find_doi
from analysis.pipeline.documents.cleantext import clean_tree
from analysis.pipeline.retrieval import evidence
from analysis.pipeline.retrieval.embeddings import embedder_for
from analysis.pipeline.providers.errors import ProviderError
from analysis.pipeline.documents.pdftext import ParseError
from analysis.pipeline.documents.readers import extract_file_within
from analysis.pipeline.documents.sandbox import ResourceLimitExceeded, SandboxError, run_limited
from analysis.settings import PipelineSettings

logger = logging.getLogger(__name__)

#: Imported once into the parse sandbox's fork server instead of once per document.
READER_MODULES = ("pypdf", "docx", "analysis.pipeline.documents.readers")


def parse_job(parse_job_id: int, *, settings: PipelineSettings, broker=None) -> str | None:
    """Parse every unfinished item of the job; its terminal status (None if it had ended)."""
    broker = messages.broker_or_global(broker)
    row = db.one_on(broker, "parse_job_start_one", job_id=parse_job_id)
    if row is None:
        return None
    user_id, session_id = row
    while _parse_next_item(broker, parse_job_id, user_id, session_id, settings):
        pass
    return finish_job(parse_job_id, broker=broker)


def finish_job(parse_job_id: int, *, broker=None) -> str | None:
    """End the job if no item is left to parse; its terminal status, or None."""
    row = db.one_on(messages.broker_or_global(broker), "parse_job_finish_one", job_id=parse_job_id)
    if row is not None:
        logger.info("parse job finished", extra={"action": "parse_job_finished", "parse_job_id": parse_job_id,
                                                 "status": row[0]})
    return row[0] if row else None


def _parse_next_item(broker, job_id: int, user_id: int, session_id: int, settings: PipelineSettings) -> bool:
    """Claim, parse and record one item; False when none is left."""
    with broker.transaction() as cur:
        item = db.one(cur, "parse_item_claim_one", job_id=job_id)
    if item is None:
        return False
    item_id, filename, kind, doi, sha256, size, attempts = item
    if attempts > settings.parse_max_attempts:
        _fail(broker, item_id, attempts, "worker_crashed",
              f"{filename} could not be parsed: the parser stopped {attempts - 1} times while reading it.")
        return True
    try:
        with _staged_file(broker, item_id, size) as path:
            document = clean_tree(run_limited(extract_file_within, str(path), filename,
                                              settings.parse_max_text_chars, **_budget(settings)))
    except _ClaimLost:
        return True  # the item ended meanwhile (swept): nothing of it is left to parse
    except ParseError as exc:
        _fail(broker, item_id, attempts, _code(exc), exc.reason)
        return True
    except SandboxError as exc:
        _fail(broker, item_id, attempts, "document_too_complex", _too_complex(filename, exc))
        return True
    pages = document.pages
    passages = split_passages(pages)
    embedded = _embed(item_id, kind, passages, split_page_sentences(pages), settings)
    metadata = _metadata(pages, doi, document.metadata)
    try:
        document_id = _record_parsed(broker, item_id, user_id, session_id, kind, filename, doi, pages, passages,
                                     embedded, metadata, size, sha256, attempts, document.structure())
    except _ClaimLost:
        return True  # claimed again by another delivery meanwhile: its document wins, ours rolled back
    except psycopg2.OperationalError:
        raise  # the database is away or the transaction lost a race: the message is retried
    except (psycopg2.Error, ValueError) as exc:
        # Refused for what the values are (the driver raises ValueError for a NUL): a retry
        # would be refused the same way, so the item fails now and its upload goes on.
        logger.exception("parsed upload not stored", extra={"action": "item_not_stored", "item_id": item_id})
        _fail(broker, item_id, attempts, "document_not_stored",
              f"{filename} was read but its text could not be stored ({type(exc).__name__}).")
        return True
    logger.info("upload parsed", extra={"action": "item_parsed", "parse_job_id": job_id, "item_id": item_id,
                                        "document_id": document_id, "pages": len(pages),
                                        "chunks": len(passages)})
    return True


class _ClaimLost(Exception):
    """The parse item was claimed again while this delivery parsed it."""


#: Bytes of an upload read per query when it is copied to the sandbox's file.
SLICE_BYTES = 4 << 20


@contextmanager
def _staged_file(broker, item_id: int, size: int) -> Iterator[Path]:
    """The item's staged bytes in a temporary file, copied a slice at a time (the worker holds
    one slice, never the upload); removed afterwards. _ClaimLost when the bytes are gone."""
    fd, name = tempfile.mkstemp(prefix="citeq-upload-")
    path = Path(name)
    try:
        with os.fdopen(fd, "wb") as f:
            for start in range(0, size, SLICE_BYTES):
                (chunk,) = db.one_on(broker, "parse_item_bytes_slice_one", item_id=item_id, start=start + 1,
                                     length=SLICE_BYTES)
                if chunk is None:
                    raise _ClaimLost()
                f.write(chunk)
        yield path
    finally:
        path.unlink(missing_ok=True)


def _record_parsed(broker, item_id, user_id, session_id, kind, filename, doi, pages, passages, embedded,
                   metadata, size, sha256, attempts, structure) -> int:
    """Write a parsed document, its pages and chunks, and mark the item parsed; one transaction."""
    with broker.transaction() as cur:
        document_id = db.one(
            cur, "document_insert_one", user_id=user_id, kind=kind, filename=filename, doi=doi,
            session_id=session_id, pages=len(pages), size_bytes=size, sha256=sha256,
            metadata=json.dumps(metadata), structure=json.dumps(structure),
        )[0]
        db.one(cur, "document_pages_insert", document_id=document_id, pages=[p.number for p in pages],
               texts=[p.text for p in pages])
        db.one(cur, "chunks_insert", document_id=document_id, user_id=user_id,
               ordinals=[p.ordinal for p in passages], pages=[p.page for p in passages],
               texts=[p.text for p in passages], embeddings=embedded.passages)
        if embedded.sentences:
            evidence.store_sentences(cur, document_id=document_id, user_id=user_id, model=embedded.model,
                                     pages=pages, vectors=embedded.sentences)
        if kind == "source":
            db.one(cur, "session_source_link_one", session_id=session_id, document_id=document_id,
                   user_id=user_id)
        if db.one(cur, "parse_item_parsed_one", item_id=item_id, document_id=document_id,
                  attempts=attempts) is None:
            raise _ClaimLost()
    return document_id


class _Embedded(NamedTuple):
    """What the parse embedded of a document: its passages' vectors as ``real[]`` literals (None
    each when not embedded) and its sentences' vectors (empty when not embedded)."""

    passages: list[str | None]
    sentences: list[list[float]]
    model: str | None


def _embed(item_id: int, kind: str, passages: Sequence[Passage], sentences: Sequence[Passage],
           settings: PipelineSettings) -> _Embedded:
    """Embed a source's sentences, and its passages as the mean of the sentences they hold
    (:func:`evidence.pooled_passage_vectors`); nothing for a thesis, without an embedder, or when
    it fails (logged: the item parses anyway, BM25 alone for it)."""
    nothing = _Embedded([None] * len(passages), [], None)
    try:
        embedder = embedder_for(settings.embeddings, settings.judge)
        if embedder is None or kind != "source" or not passages:
            return nothing
        sentence_vectors = embedder.embed([s.text for s in sentences]) if sentences else []
        vectors = evidence.pooled_passage_vectors(passages, sentences, sentence_vectors, embedder.embed)
    except (ProviderError, ValueError) as exc:
        logger.warning("passages not embedded", extra={"action": "embedding_failed", "item_id": item_id,
                                                       "reason": str(exc)})
        return nothing
    return _Embedded(evidence.vector_literals(vectors), sentence_vectors, embedder.name)


def _budget(settings: PipelineSettings) -> dict:
    return {"cpu_seconds": settings.parse_cpu_seconds, "memory_bytes": settings.parse_memory_mb << 20,
            "wall_seconds": settings.parse_wall_seconds, "preload": READER_MODULES}


def _too_complex(filename: str, exc: SandboxError) -> str:
    if isinstance(exc, ResourceLimitExceeded):
        return f"{filename} is too complex to read: the parser {exc}. Simplify or split the document."
    return f"{filename} could not be read: the parser stopped ({exc})."


def _fail(broker, item_id: int, attempts: int, code: str, reason: str) -> None:
    db.one_on(broker, "parse_item_fail_one", item_id=item_id, attempts=attempts, code=code, reason=reason[:1000])
    logger.info("upload failed to parse", extra={"action": "item_failed", "item_id": item_id, "code": code,
                                                 "reason": reason})


def _code(exc: ParseError) -> str:
    """``NoExtractableText`` -> ``no_extractable_text``: the item's machine-readable error."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", type(exc).__name__).lower()


def _metadata(pages, doi: str | None, own: dict[str, str]) -> dict[str, str]:
    """What citation matching can use besides the first pages: a DOI printed in the text,
    and what the file says about itself (author, title, year of creation)."""
    found = doi or find_doi(" ".join(p.text for p in pages[:2]))
    metadata = {k: v for k, v in own.items() if k in ("author", "title", "created_year")}
    if found and DOI_PATTERN.match(found):
        metadata["doi"] = found
    return metadata
