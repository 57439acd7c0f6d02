"""The source store: a per-process L1 cache of BM25 indexes over a session's sources.

Postgres holds the truth (``chunks``, ``session_sources``); this cache only saves
rebuilding an index for every citation. An entry is keyed by (user, session) and used
while it is younger than the TTL and the session's ``sources_version`` is the one it
was built from (one primary-key read per lookup). A miss — a new process, a redeploy,
a TTL, a source added or a reset — rebuilds the index from the chunks, always filtered
by ``user_id``: a guessed session id of another user yields an empty index.

With hybrid retrieval and no pgvector in the database, an entry also holds the chunks'
embeddings, so the worker ranks vectors without another read; such entries are cached
apart from BM25-only ones (``with_embeddings`` is part of the key).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

from analysis import db
from analysis.pipeline.retrieval.index import PassageIndex, PassageRecord
from analysis.settings import PipelineSettings

logger = logging.getLogger(__name__)


@dataclass
class _Entry:
    index: PassageIndex
    version: int | None
    built_at: float


class SourceStore:
    """Cached passage indexes per (user, session); thread-safe, bounded (LRU)."""

    def __init__(self, broker, *, ttl_seconds: float = 600.0, max_entries: int = 64) -> None:
        self.broker = broker
        self.ttl = ttl_seconds
        self.max_entries = max_entries
        self._entries: OrderedDict[tuple[int, int, bool], _Entry] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    @classmethod
    def from_settings(cls, broker, settings: PipelineSettings) -> "SourceStore":
        return cls(broker, ttl_seconds=settings.source_cache_ttl_seconds, max_entries=settings.source_cache_size)

    def index(self, user_id: int, session_id: int, *, with_embeddings: bool = False) -> PassageIndex:
        """The BM25 index over the sources of the user's session (empty if it is not theirs);
        ``with_embeddings`` loads the chunks' embeddings too, for ``vector_search``."""
        key = (int(user_id), int(session_id), bool(with_embeddings))
        version = self._version(key[0], key[1])
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry.version == version and time.monotonic() - entry.built_at < self.ttl:
                self._entries.move_to_end(key)
                self.hits += 1
                return entry.index
        index = self.rebuild(*key)
        with self._lock:
            self.misses += 1
            self._entries[key] = _Entry(index, version, time.monotonic())
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
        return index

    def rebuild(self, user_id: int, session_id: int, with_embeddings: bool = False) -> PassageIndex:
        """Build the index from Postgres, bypassing the cache."""
        rows = db.many_on(self.broker, "session_chunks_many", user_id=user_id, session_id=session_id,
                          with_embeddings=with_embeddings)
        index = PassageIndex(_records(rows))
        logger.info("source index built", extra={"action": "source_index_built", "user_id": user_id,
                                                 "session_id": session_id, "passages": len(index)})
        return index

    def clear(self) -> None:
        """Forget every cached index (what a redeploy does)."""
        with self._lock:
            self._entries.clear()

    def _version(self, user_id: int, session_id: int) -> int | None:
        row = db.one_on(self.broker, "session_version_one", user_id=user_id, session_id=session_id)
        return None if row is None else row[0]


def document_index(broker, user_id: int, document_id: int, *, with_embeddings: bool = False) -> PassageIndex:
    """An uncached index over one document of the user (a source outside any session)."""
    rows = db.many_on(broker, "document_chunks_many", user_id=user_id, document_id=document_id,
                      with_embeddings=with_embeddings)
    return PassageIndex(_records(rows))


def _records(rows) -> list[PassageRecord]:
    return [PassageRecord(passage_id=r[0], source_id=str(r[1]), page=r[2], text=r[3], embedding=r[4])
            for r in rows]


_stores: dict[int, SourceStore] = {}
_stores_lock = threading.Lock()


def store_for(broker, settings: PipelineSettings) -> SourceStore:
    """This process's store for ``broker`` (one per broker, created on first use)."""
    with _stores_lock:
        store = _stores.get(id(broker))
        if store is None:
            store = SourceStore.from_settings(broker, settings)
            _stores[id(broker)] = store
        return store


def clear_all() -> None:
    """Drop every cached index in this process."""
    with _stores_lock:
        for store in _stores.values():
            store.clear()
