// Every citation edge of the corpus this scorer (name and version) has not scored yet.
// Parameters: $scorer, $version, $limit (int).
// Returns: citing, cited.
MATCH (u:Paper)-[r:CITES]->(v:Paper)
WHERE r.scorer IS NULL OR r.scorer <> $scorer OR r.scorer_version <> $version
RETURN u.id AS citing, v.id AS cited
LIMIT $limit
