// A paper's claims, per extractor, in rank order, each with the verbatim phrase it came from.
//   :param paper_id => '0301003'
// Parameters: $paper_id.
// Returns: extractor, rank, type, text, source_phrase.
MATCH (:Paper {id: $paper_id})-[h:HAS_CLAIM]->(c:Claim)
RETURN c.extractor AS extractor, h.rank AS rank, c.type AS type, c.text AS text,
       c.source_phrase AS source_phrase
ORDER BY extractor, rank
