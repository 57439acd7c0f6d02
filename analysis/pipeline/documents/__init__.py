"""Documents: the readers (PDF, DOCX, Markdown, text) that turn a file into one `Document`
structure (pages, headings, paragraphs, footnotes), and the sandbox that runs them on untrusted bytes."""
