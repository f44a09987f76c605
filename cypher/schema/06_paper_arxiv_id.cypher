// Identity resolution looks papers up by arXiv id and DOI.
CREATE INDEX paper_arxiv_id IF NOT EXISTS FOR (p:Paper) ON (p.arxiv_id)
