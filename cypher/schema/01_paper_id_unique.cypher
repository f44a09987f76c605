// Paper ids are unique; MERGE on Paper.id relies on the backing index.
CREATE CONSTRAINT paper_id_unique IF NOT EXISTS FOR (p:Paper) REQUIRE p.id IS UNIQUE
