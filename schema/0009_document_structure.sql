-- What a reader found in a document besides its pages: headings, paragraphs (each with its
-- page and reading position) and footnotes, as analysis.document.Document.structure()
-- writes them. Citation extraction works from this, so it must outlive the process that
-- parsed the file. NULL for documents parsed before; extraction then rebuilds a structure
-- from their pages with the plain-text reader.
ALTER TABLE documents ADD COLUMN structure jsonb;
