-- A judge that cannot decide from the evidence says so instead of guessing: `uncertain`
-- carries its best passage and asks the reader to look. Mirrored by analysis.judges.Verdict.
ALTER TYPE citation_verdict ADD VALUE IF NOT EXISTS 'uncertain' AFTER 'not_supported';

-- How each citation's source was found, or why none was: the report shows both, and an
-- unresolved citation is never a guess. match_method is one of doi, author_year, title,
-- metadata (NULL while unresolved); unresolved_reason says why nothing matched.
ALTER TABLE job_citations
    ADD COLUMN match_method      text,
    ADD COLUMN unresolved_reason text;

-- The judge that decided the job's citations ("offline", "openai:<model>"), set with the
-- retrieval mode when the citations are extracted.
ALTER TABLE analysis_jobs ADD COLUMN judge text;
