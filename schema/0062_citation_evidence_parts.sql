-- The sentence for each part of a claim the offline judge split into parts ("X rose, and Y
-- fell"): a JSON list of {part, sentence, page, coverage} in claim order, so the evidence view
-- shows what the source says to every part, not only to the one the verdict quotes (issue 28).
-- NULL: the claim was judged whole, or its verdict was stored before this column.
ALTER TABLE job_citations ADD COLUMN evidence_parts jsonb;
