// Store claims once per (paper, extractor); rerunning with the same rows changes nothing.
// Parameters: $rows (list of {paper_id, rank, text, type, source_phrase}), $extractor,
//             $created (ISO timestamp).
// Returns: written (count of rows).
UNWIND $rows AS row
MATCH (p:Paper {id: row.paper_id})
MERGE (c:Claim {id: row.paper_id + '|' + $extractor + '|' + toString(row.rank)})
  ON CREATE SET c.text = row.text, c.type = row.type, c.source_phrase = row.source_phrase,
                c.extractor = $extractor, c.created = datetime($created)
MERGE (p)-[h:HAS_CLAIM]->(c)
  ON CREATE SET h.rank = row.rank
RETURN count(*) AS written
