// The shortest citation paths between two papers, citations followed either way (each step
// keeps who cites whom). Cypher wants the bound written into the pattern: at most 6 steps,
// and $max_steps narrows it.
// Parameters: $source (paper id), $target (paper id, another), $max_steps (1 to 6), $limit.
// Returns: papers (the path's papers in order, each {id, title, year, first_author,
//          arxiv_id, doi, s2_id}), steps (each {citing, cited}).
MATCH (a:Paper {id: $source}), (b:Paper {id: $target})
MATCH path = allShortestPaths((a)-[:CITES*..6]-(b))
WHERE length(path) <= $max_steps
WITH path LIMIT $limit
RETURN [p IN nodes(path) | {id: p.id, title: p.title, year: p.year,
                            first_author: p.authors[0], arxiv_id: p.arxiv_id, doi: p.doi,
                            s2_id: p.s2_id}] AS papers,
       [c IN relationships(path) | {citing: startNode(c).id, cited: endNode(c).id}] AS steps
