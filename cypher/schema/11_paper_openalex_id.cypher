// Papers grown from OpenAlex are found again by their OpenAlex work id, and the edges their
// stored reference lists name are drawn through it.
CREATE INDEX paper_openalex_id IF NOT EXISTS FOR (p:Paper) ON (p.openalex_id)
