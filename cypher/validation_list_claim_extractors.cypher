// Which claim extractors have stored claims, and for how many papers.
// Parameters: none.
// Returns: extractor, papers.
MATCH (p:Paper)-[:HAS_CLAIM]->(c:Claim)
RETURN c.extractor AS extractor, count(DISTINCT p) AS papers
ORDER BY papers DESC, extractor
