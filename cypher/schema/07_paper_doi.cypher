// Identity resolution looks papers up by DOI.
CREATE INDEX paper_doi IF NOT EXISTS FOR (p:Paper) ON (p.doi)
