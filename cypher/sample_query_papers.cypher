// Papers to build benchmark queries from, for a corpus without a query set (the generated
// one): every paper with at least one citation edge whose id hashes into the sample, so the
// same corpus gives the same sample. Used by crase.bench.search_latency --sample-queries.
// Parameters: $modulus (keep about one paper in $modulus), $limit.
// Returns: id, title.
MATCH (p:Paper)
WHERE p.title IS NOT NULL AND abs(toInteger(id(p) * 2654435761) % $modulus) = 0
  AND EXISTS { (p)-[:CITES]-() }
RETURN p.id AS id, p.title AS title
ORDER BY id
LIMIT $limit
