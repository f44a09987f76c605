// Year filters and recency ranks.
CREATE INDEX paper_year IF NOT EXISTS FOR (p:Paper) ON (p.year)
