// Prior works of a run (Connected Papers' list): the papers of its evidence graph that its
// returned papers cite most, whether or not the run returned them.
// Parameters: $run_id, $min_count (cited by at least this many returned papers), $limit.
// Returns: id, title, year, authors, venue, journal_ref, arxiv_id, doi, s2_id, rank (the
//          paper's own rank where the run returned it, else null), count (returned papers
//          citing it), by_ranks (their ranks, unordered).
MATCH (r:Run {id: $run_id})-[x:RETURNED]->(u:Paper)-[:CITES]->(p:Paper)<-[:CONSIDERED]-(r)
WITH r, p, count(DISTINCT u) AS count, collect(DISTINCT x.rank) AS by_ranks
WHERE count >= $min_count
OPTIONAL MATCH (r)-[own:RETURNED]->(p)
RETURN p.id AS id, p.title AS title, p.year AS year, p.authors AS authors, p.venue AS venue,
       p.journal_ref AS journal_ref, p.arxiv_id AS arxiv_id, p.doi AS doi, p.s2_id AS s2_id,
       own.rank AS rank, count, by_ranks
ORDER BY count DESC, p.year, p.id
LIMIT $limit
