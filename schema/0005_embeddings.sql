-- Hybrid retrieval: a chunk may carry an embedding (NULL when no embedding provider is
-- configured, or it failed while the document was parsed; retrieval is then BM25 alone).
--
-- Stored as real[] always, never as pgvector's `vector`: the schema must migrate on a
-- server without pgvector, and the dimension belongs to whichever model is configured.
-- Where pgvector is installed, queries cast `embedding::vector` to rank in Postgres;
-- elsewhere the workers rank the vectors they already hold (numpy).
ALTER TABLE chunks ADD COLUMN embedding real[];

-- Install pgvector where the server offers it and this role may; never required.
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector') THEN
        BEGIN
            CREATE EXTENSION IF NOT EXISTS vector;
        EXCEPTION WHEN insufficient_privilege OR feature_not_supported OR undefined_file THEN
            RAISE NOTICE 'pgvector is available but could not be installed (%); vectors are ranked by the workers', SQLERRM;
        END;
    END IF;
END
$$;
