"""The parse lifecycle, declared once: the states of parse jobs and parse items, the changes
each may make and the event each change writes. Mirrors schema/0018_parse_lifecycle.sql, where
the database refuses any other change and writes the events itself (parse_events), as it does
for analysis jobs (analysis/queue/jobs.py); tests/integration/test_parse_lifecycle.py keeps the
two in step. Uploads insert jobs born ``queued`` (intake/uploads.py), the parse worker moves
them (intake/parsing.py), the sweeps re-send or expire them (intake/sweeps.py).
"""

from __future__ import annotations

import enum


class ParseJobStatus(str, enum.Enum):
    #: Staged; its message is on the broker.
    QUEUED = "queued"
    #: A worker parses its items.
    RUNNING = "running"
    #: Every item parsed.
    SUCCEEDED = "succeeded"
    #: Some items parsed, some failed (each item says why).
    PARTIAL = "partial"
    #: Every item failed.
    FAILED = "failed"


class ParseItemStatus(str, enum.Enum):
    #: Bytes staged, waiting for the parse worker.
    QUEUED = "queued"
    #: A worker is parsing it.
    RUNNING = "running"
    #: Its document and chunks exist; the bytes are gone.
    PARSED = "parsed"
    #: error_code and error_reason say why; the bytes are gone.
    FAILED = "failed"


PARSE_TERMINAL = frozenset({ParseJobStatus.SUCCEEDED, ParseJobStatus.PARTIAL, ParseJobStatus.FAILED})


class ParseEvent(str, enum.Enum):
    """What the parse audit trail (``parse_events``) records."""

    #: A parse job was inserted with its items.
    STAGED = "staged"
    #: A worker started (or, after a worker died, restarted) the job.
    STARTED = "started"
    #: A busy job's lost message was replaced.
    RESENT = "resent"
    #: Every item parsed.
    SUCCEEDED = "succeeded"
    #: Some items parsed, some failed.
    PARTIAL = "partial"
    #: Every item failed.
    FAILED = "failed"
    #: A worker took an item (detail: the attempt).
    ITEM_STARTED = "item_started"
    #: An item's document exists; its bytes are gone.
    ITEM_PARSED = "item_parsed"
    #: An item failed (detail: its error code); its bytes are gone.
    ITEM_FAILED = "item_failed"


#: Every status a parse job still has to leave: what "busy" means (SQL ``is_busy``).
JOB_BUSY = frozenset({ParseJobStatus.QUEUED, ParseJobStatus.RUNNING})
ITEM_BUSY = frozenset({ParseItemStatus.QUEUED, ParseItemStatus.RUNNING})

_J, _I, _E = ParseJobStatus, ParseItemStatus, ParseEvent

#: (from, to) -> event for a parse job; a job whose items all expired ends from ``queued``.
JOB_TRANSITIONS: dict[tuple[ParseJobStatus, ParseJobStatus], ParseEvent] = {
    (_J.QUEUED, _J.RUNNING): _E.STARTED,
    (_J.RUNNING, _J.RUNNING): _E.STARTED,
    **{(start, end): _E(end.value) for start in JOB_BUSY for end in PARSE_TERMINAL},
}

#: (from, to) -> event for a parse item; ``running`` again is one more attempt after a
#: worker died, ``queued -> failed`` is a staged item past the blob TTL.
ITEM_TRANSITIONS: dict[tuple[ParseItemStatus, ParseItemStatus], ParseEvent] = {
    (_I.QUEUED, _I.RUNNING): _E.ITEM_STARTED,
    (_I.RUNNING, _I.RUNNING): _E.ITEM_STARTED,
    (_I.RUNNING, _I.PARSED): _E.ITEM_PARSED,
    (_I.RUNNING, _I.FAILED): _E.ITEM_FAILED,
    (_I.QUEUED, _I.FAILED): _E.ITEM_FAILED,
}
