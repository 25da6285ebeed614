"""Reports of results stores: the document model, its sections (asking each run's `System`), figures, HTML and
Markdown output, and the tables commands print in the terminal."""
