"""The offline report writer of the idea workflow, used where no model endpoint is
configured.

- Report (`offline-report-template@1`): the synthesis laid out in the report's sections.
"""

import json
from collections.abc import Sequence
from typing import Any

from crase.idea.candidates import Candidate
from crase.idea.report import ReportOutcome, report_headings
from crase.idea.structuring import IdeaStructure
from crase.idea.terms import distinct
from crase.models.chat import ModelRunner

REPORTER = "offline-report-template@1"


class OfflineReporter:
    name = REPORTER

    def write(self, runner: ModelRunner, structure: IdeaStructure, synthesis: dict[str, Any],
              shortlist: Sequence[Candidate]) -> ReportOutcome:
        markdown, cited = render_offline_report(synthesis)
        return ReportOutcome("written", REPORTER, markdown,
                             "Offline template report: grades are offline similarity "
                             "judgements, not a model's reading.", cited)


def render_offline_report(synthesis: dict[str, Any]) -> tuple[str, list[str]]:
    meta, papers = synthesis["metadata"], synthesis["papers"]
    by_id = {paper["paper_id"]: paper for paper in papers}
    headings = report_headings()
    cited: list[str] = []

    def listing(bucket: str) -> str:
        ids = synthesis["buckets"].get(bucket, [])
        if not ids:
            return "None found among the shortlisted works."
        cited.extend(ids)
        return "\n".join(f"- **{by_id[pid]['title']}** ({by_id[pid]['year'] or 'n.d.'}, "
                         f"`{pid}`): {by_id[pid]['notes']}" for pid in ids)

    facets = "\n".join(f"- {label}: {facet}" for label, facet in meta["facets"].items())
    ranked = sorted((p for p in papers if p["final_rank"]), key=lambda p: p["final_rank"])
    overview = "\n".join(f"{p['final_rank']}. **{p['title']}** ({p['year'] or 'n.d.'}): "
                         f"{p['expert_reason']}" for p in ranked) or "No final ranking."
    cited.extend(p["paper_id"] for p in ranked)
    stats = synthesis["global_stats"]
    limits = "\n".join(f"- {note}" for note in synthesis["limitations"]["notes"])
    bodies = [
        f"{meta['idea_description']}\n\nFacets:\n{facets}",
        f"The expert's top works:\n\n{overview}",
        listing("high_overlap"),
        listing("partial_overlap"),
        listing("adjacent"),
        "An offline template cannot judge gaps; read the partial-overlap notes for the facets "
        "no work covers.",
        f"Counts: {json.dumps(stats, sort_keys=True)}\n\n{limits}",
    ]
    sections = [f"## {h}\n\n{b}" for h, b in zip(headings, bodies, strict=True)]
    text = "**TL;DR.** Offline template report from the run's saved evidence.\n\n"
    return text + "\n\n".join(sections) + "\n", distinct(cited)
