// What the learned order knows of each candidate beyond the search's own lists: how
// often it is cited in the whole corpus and how often by recent papers, how many
// references it has, its authors and its stored vector (compared with the anchors' in
// Python: Cypher's vector functions cost more than moving the vectors).
// The citations of the excluded papers (a benchmark query's hidden source) do not count.
// Parameters: $ids (paper ids), $excluded (ids whose citations do not count),
//             $recent_from (year: a citation from this year on is recent).
// Returns: id, cited_by, recent_cited_by, references (in-corpus), authors, vector (null
//          where the paper has none).
UNWIND $ids AS id
MATCH (p:Paper {id: id})
RETURN p.id AS id,
       COUNT { (p)<-[:CITES]-(x:Paper) WHERE NOT x.id IN $excluded } AS cited_by,
       COUNT { (p)<-[:CITES]-(x:Paper)
               WHERE x.year >= $recent_from AND NOT x.id IN $excluded } AS recent_cited_by,
       COUNT { (p)-[:CITES]->(r:Paper) WHERE NOT r.id IN $excluded } AS references,
       coalesce(p.authors, []) AS authors,
       p.embedding AS vector
