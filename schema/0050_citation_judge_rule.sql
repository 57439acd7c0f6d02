-- The offline judge's rule behind each verdict (issue 23).
--
-- The offline judge decides by a table of named rules, each measured on held-out labelled
-- cases; a verdict's confidence is its rule's precision there. The rule's name ("figures_stated",
-- or "overlap_sentence > guard_directions" where a contradiction guard changed the verdict) is
-- stored with the verdict so the report and its JSON can say which rule decided. NULL for a
-- model judge, a missing source, and every verdict written before this migration.
ALTER TABLE job_citations ADD COLUMN IF NOT EXISTS judge_rule text;
