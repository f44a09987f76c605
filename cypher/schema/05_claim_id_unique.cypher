// Claims are stored once per (paper, extractor, rank); the id encodes all three.
CREATE CONSTRAINT claim_id_unique IF NOT EXISTS FOR (c:Claim) REQUIRE c.id IS UNIQUE
