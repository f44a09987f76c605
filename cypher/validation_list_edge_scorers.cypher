// Which entailment scorers have stored scores on citation edges, and on how many: the
// corpus-wide validation sample draws from one scorer's edges.
// Parameters: none.
// Returns: scorer, version, edges.
MATCH (:Paper)-[r:CITES]->(:Paper)
WHERE r.scorer IS NOT NULL
RETURN r.scorer AS scorer, r.scorer_version AS version, count(*) AS edges
ORDER BY edges DESC, scorer, version
