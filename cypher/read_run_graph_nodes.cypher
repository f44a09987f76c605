// Every paper a run considered: kept for ranking or cut (and why), seed or not, and its
// rank and score where it was returned.
// Parameters: $run_id.
// Returns: id, title, year, first_author, seed, kept, reason, rank, score (rank and score
//          null when the paper was not returned).
MATCH (r:Run {id: $run_id})-[c:CONSIDERED]->(p:Paper)
OPTIONAL MATCH (r)-[x:RETURNED]->(p)
RETURN p.id AS id, p.title AS title, p.year AS year, p.authors[0] AS first_author,
       c.seed AS seed, c.kept AS kept,
       c.reason AS reason, x.rank AS rank, x.score AS score
ORDER BY coalesce(x.rank, 2147483647), id
