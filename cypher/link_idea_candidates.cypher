// Record every in-corpus candidate of an idea run: one IDEA_CANDIDATE relationship from
// the Run to each corpus version of each work, with the work's routes, assessment, gate
// and budget reasons, shortlist flag, PDF outcome and final rank (JSON strings where the
// value is a structure). Candidates not in the corpus live in the audit JSON only.
// Parameters: $run_id, $rows (list of {paper_id, work_id, primary, routes, route_names,
//             eligible, eligibility_reason, selected, selection_reason, assessment_status,
//             assessment_score, assessment, gate_kept, gate_reason, shortlisted,
//             shortlist_position, shortlist_reason, pdf_status, pdf, final_rank,
//             final_reason, evidence_source, identity_notes}).
// Returns: linked (count).
MATCH (r:Run {id: $run_id})
UNWIND $rows AS row
MATCH (p:Paper {id: row.paper_id})
CREATE (r)-[:IDEA_CANDIDATE {
  work_id: row.work_id, primary: row.primary, routes: row.routes,
  route_names: row.route_names, eligible: row.eligible,
  eligibility_reason: row.eligibility_reason, selected: row.selected,
  selection_reason: row.selection_reason, assessment_status: row.assessment_status,
  assessment_score: row.assessment_score, assessment: row.assessment,
  gate_kept: row.gate_kept, gate_reason: row.gate_reason, shortlisted: row.shortlisted,
  shortlist_position: row.shortlist_position, shortlist_reason: row.shortlist_reason,
  pdf_status: row.pdf_status, pdf: row.pdf, final_rank: row.final_rank,
  final_reason: row.final_reason, evidence_source: row.evidence_source,
  identity_notes: row.identity_notes}]->(p)
RETURN count(*) AS linked
