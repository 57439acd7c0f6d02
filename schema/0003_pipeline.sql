-- The analysis pipeline: staged uploads and their parsing, upload sessions and the sources
-- linked to them, parsed text (pages and chunks), one row per judged citation, and the
-- table behind the Postgres backend of Dramatiq's rate limiters.

-- An upload session groups a user's uploads; its sources are what an analysis retrieves
-- from. sources_version moves whenever the set of linked sources changes, so a process's
-- cached index of the session can tell it is stale with one cheap read.
CREATE TABLE upload_sessions (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id         bigint NOT NULL REFERENCES accounts (user_id),
    sources_version integer NOT NULL DEFAULT 0,
    created_at      timestamptz NOT NULL DEFAULT now(),
    reset_at        timestamptz
);
CREATE INDEX upload_sessions_user ON upload_sessions (user_id, id);

-- Mirrored by analysis.uploads.ParseJobStatus (a test keeps the two identical).
CREATE TYPE parse_job_status AS ENUM (
    'queued',     -- staged; its message is on the broker
    'running',    -- a worker parses its items
    'succeeded',  -- every item parsed
    'partial',    -- some items parsed, some failed (each item says why)
    'failed'      -- every item failed
);

-- Mirrored by analysis.uploads.ParseItemStatus.
CREATE TYPE parse_item_status AS ENUM (
    'queued',   -- bytes staged, waiting for the parse worker
    'running',  -- a worker is parsing it (attempts counts how often one started)
    'parsed',   -- its document and chunks exist; the bytes are gone
    'failed'    -- error_code and error_reason say why; the bytes are gone
);

CREATE TABLE parse_jobs (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id     bigint NOT NULL REFERENCES accounts (user_id),
    session_id  bigint NOT NULL REFERENCES upload_sessions (id),
    status      parse_job_status NOT NULL DEFAULT 'queued',
    message_id  text NOT NULL,  -- the parse message; the stall sweeper re-sends a lost one
    created_at  timestamptz NOT NULL DEFAULT now(),
    started_at  timestamptz,
    finished_at timestamptz,
    CONSTRAINT parse_jobs_finished_iff_terminal CHECK (
        (status IN ('succeeded', 'partial', 'failed')) = (finished_at IS NOT NULL)
    )
);
CREATE INDEX parse_jobs_active ON parse_jobs (user_id) WHERE status IN ('queued', 'running');

CREATE TABLE parse_items (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    job_id       bigint NOT NULL REFERENCES parse_jobs (id) ON DELETE CASCADE,
    user_id      bigint NOT NULL REFERENCES accounts (user_id),
    ordinal      integer NOT NULL,
    filename     text NOT NULL,
    kind         document_kind NOT NULL,
    doi          text,
    size_bytes   bigint NOT NULL,
    sha256       text NOT NULL,
    file_bytes   bytea,
    status       parse_item_status NOT NULL DEFAULT 'queued',
    attempts     integer NOT NULL DEFAULT 0,
    error_code   text,
    error_reason text,
    document_id  bigint REFERENCES documents (id),
    created_at   timestamptz NOT NULL DEFAULT now(),
    finished_at  timestamptz,
    UNIQUE (job_id, ordinal),
    -- Staged bytes never outlive their item: every terminal transition drops them.
    CONSTRAINT parse_items_terminal_drops_bytes CHECK (status IN ('queued', 'running') OR file_bytes IS NULL),
    CONSTRAINT parse_items_parsed_has_document CHECK ((status = 'parsed') = (document_id IS NOT NULL)),
    CONSTRAINT parse_items_failed_has_reason CHECK (status <> 'failed' OR error_reason IS NOT NULL)
);
-- The staged-bytes cap and the blob-TTL sweeper read only items still holding bytes.
CREATE INDEX parse_items_staged ON parse_items (user_id, created_at) WHERE file_bytes IS NOT NULL;

ALTER TABLE documents
    ADD COLUMN session_id bigint REFERENCES upload_sessions (id),
    ADD COLUMN pages      integer,
    ADD COLUMN size_bytes bigint,
    ADD COLUMN sha256     text,
    ADD COLUMN metadata   jsonb NOT NULL DEFAULT '{}';

-- Which sources an upload session offers for retrieval. Unlinked only by an explicit reset.
CREATE TABLE session_sources (
    session_id  bigint NOT NULL REFERENCES upload_sessions (id) ON DELETE CASCADE,
    document_id bigint NOT NULL REFERENCES documents (id),
    user_id     bigint NOT NULL REFERENCES accounts (user_id),
    linked_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (session_id, document_id)
);

-- The text of every page as extracted (extraction needs lines: headings, reference lists).
CREATE TABLE document_pages (
    document_id bigint NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
    page        integer NOT NULL CHECK (page >= 1),
    text        text NOT NULL,
    PRIMARY KEY (document_id, page)
);

-- Retrieval passages. user_id is denormalised on purpose: every read filters on it, so a
-- guessed session or document id of another user finds nothing.
CREATE TABLE chunks (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    document_id bigint NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
    user_id     bigint NOT NULL REFERENCES accounts (user_id),
    ordinal     integer NOT NULL,
    page        integer NOT NULL CHECK (page >= 1),
    text        text NOT NULL,
    UNIQUE (document_id, ordinal)
);
CREATE INDEX chunks_user_document ON chunks (user_id, document_id, ordinal);

-- Mirrored by analysis.judges.Verdict.
CREATE TYPE citation_verdict AS ENUM (
    'supported',            -- the source states the claim
    'partially_supported',  -- the source states part of it, or less certainly
    'not_supported',        -- the source does not state it, or contradicts it
    'source_missing'        -- no uploaded source matches the citation
);

-- Extraction of an analysis: pending_citations counts the citations still to judge; the
-- judge that moves it to zero completes the job (guarded: it moves only with a verdict).
ALTER TABLE analysis_jobs
    ADD COLUMN extracted_at      timestamptz,
    ADD COLUMN citations_total   integer,
    ADD COLUMN pending_citations integer CHECK (pending_citations >= 0),
    ADD COLUMN retrieval_mode    text;

-- One row per claim–citation pair of an analysis.
CREATE TABLE job_citations (
    id                 bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    job_id             bigint NOT NULL REFERENCES analysis_jobs (id) ON DELETE CASCADE,
    user_id            bigint NOT NULL REFERENCES accounts (user_id),
    ordinal            integer NOT NULL,
    claim              text NOT NULL,
    sentence           text NOT NULL,
    marker             text NOT NULL,
    page               integer,
    reference_key      text,
    reference          jsonb,
    source_document_id bigint REFERENCES documents (id),
    -- The judge message; the stall sweeper re-sends a lost or dead one.
    message_id         text,
    dispatches         integer NOT NULL DEFAULT 0,
    verdict            citation_verdict,
    confidence         real CHECK (confidence BETWEEN 0 AND 1),
    evidence           text,
    evidence_page      integer,
    rationale          text,
    -- A delta re-check copies unchanged verdicts from its base job's citation.
    carried_from_id    bigint REFERENCES job_citations (id),
    judged_at          timestamptz,
    UNIQUE (job_id, ordinal),
    CONSTRAINT job_citations_judged_iff_verdict CHECK ((verdict IS NULL) = (judged_at IS NULL))
);
CREATE INDEX job_citations_unjudged ON job_citations (job_id) WHERE verdict IS NULL;

-- The Postgres backend of dramatiq.rate_limits: one counter per key, with an expiry.
-- An expired row counts as absent (the backend's statements check expires_at).
CREATE TABLE rate_limit_counters (
    key        text PRIMARY KEY,
    value      bigint NOT NULL,
    expires_at timestamptz NOT NULL
);
CREATE INDEX rate_limit_counters_expiry ON rate_limit_counters (expires_at);
