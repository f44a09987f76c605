// Delta of the given edges at the run's theta, computed here from the stored matrix of one
// scorer (share of citing claims whose best cited claim reaches theta), so a run with
// another theta never calls the scorer again. The rule's home is
// crase.scoring.delta.coverage_affinity; tests/scoring/test_rules_in_cypher.py holds this
// query to it. Edges that scorer has not scored come back with delta null, edges not in
// the graph with no row. At the stored theta the stored Delta is used.
// Parameters: $edges (list of [citing_id, cited_id]), $scorer, $version, $theta.
// Returns: citing, cited, delta.
UNWIND $edges AS e
MATCH (u:Paper {id: e[0]})-[r:CITES]->(v:Paper {id: e[1]})
WITH e, r, r.matrix_rows AS n, r.matrix_cols AS m
WITH e, r, n, m,
     coalesce(r.scorer = $scorer AND r.scorer_version = $version AND n > 0, false) AS ours
RETURN e[0] AS citing, e[1] AS cited,
       CASE WHEN NOT ours THEN null
            WHEN r.theta = $theta THEN r.delta
            ELSE
         toFloat(size([i IN range(0, n - 1)
                       WHERE any(j IN range(0, m - 1) WHERE r.matrix[i * m + j] >= $theta)]))
         / n
       END AS delta
