// Source papers the learned ranking may train on: published in $from_year or later (no
// lower bound when null) and before $before_year, with a title, an abstract and at least
// $min_references in-corpus references.
// Parameters: $from_year, $before_year, $min_references.
// Returns: id, title, abstract, year, references (the cited ids: the training answer).
MATCH (p:Paper)
WHERE p.year < $before_year AND ($from_year IS NULL OR p.year >= $from_year) AND p.title IS NOT NULL AND p.abstract IS NOT NULL
  AND p.abstract <> ''
WITH p, COLLECT { MATCH (p)-[:CITES]->(r:Paper) RETURN r.id } AS references
WHERE size(references) >= $min_references
RETURN p.id AS id, p.title AS title, p.abstract AS abstract, p.year AS year, references
ORDER BY id
