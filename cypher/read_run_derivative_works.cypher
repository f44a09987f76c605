// Derivative works of a run (Connected Papers' list): the papers of its evidence graph that
// cite most of its returned papers, whether or not the run returned them.
// Parameters: $run_id, $min_count (citing at least this many returned papers), $limit.
// Returns: id, title, year, authors, venue, journal_ref, arxiv_id, doi, s2_id, rank (the
//          paper's own rank where the run returned it, else null), count (returned papers
//          it cites), by_ranks (their ranks, unordered).
MATCH (r:Run {id: $run_id})-[:CONSIDERED]->(p:Paper)-[:CITES]->(v:Paper)<-[x:RETURNED]-(r)
WITH r, p, count(DISTINCT v) AS count, collect(DISTINCT x.rank) AS by_ranks
WHERE count >= $min_count
OPTIONAL MATCH (r)-[own:RETURNED]->(p)
RETURN p.id AS id, p.title AS title, p.year AS year, p.authors AS authors, p.venue AS venue,
       p.journal_ref AS journal_ref, p.arxiv_id AS arxiv_id, p.doi AS doi, p.s2_id AS s2_id,
       own.rank AS rank, count, by_ranks
ORDER BY count DESC, p.year DESC, p.id
LIMIT $limit
