// One breadth-first step of the connector: the citations either way between the papers of
// one side's frontier and the papers that side has not reached yet. Bounded: at most
// $limit rows (the caller asks for one more than it accepts, to tell a frontier past its
// bound from one that fits).
// Parameters: $frontier (paper ids reached at the last step), $reached (every paper id that
//             side has reached, the frontier's included), $limit.
// Returns: id (a frontier paper), next (a paper one step further), cites (true when `id`
//          cites `next`, false when `next` cites `id`).
UNWIND $frontier AS id
MATCH (p:Paper {id: id})-[c:CITES]-(q:Paper)
WHERE NOT q.id IN $reached
RETURN id, q.id AS next, startNode(c) = p AS cites
LIMIT $limit
