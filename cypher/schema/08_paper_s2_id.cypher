// Papers added from Semantic Scholar are matched to graph papers by their S2 id first.
CREATE INDEX paper_s2_id IF NOT EXISTS FOR (p:Paper) ON (p.s2_id)
