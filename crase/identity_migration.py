"""`crase db migrate`: bring a graph loaded before the identity rules of
`crase.paper_identity` to them, in place.

- Every stored arXiv id takes its key's spelling (no `vN`, no `arXiv:` prefix), and a
  paper with an arXiv DOI and no arXiv id gets the id the DOI names.
- A paper whose graph id came from its arXiv DOI (`doi:10.48550/arxiv.<id>`, what a
  Semantic Scholar dataset row without an arXiv id was given) takes the arXiv id as its
  graph id; where a node of that id exists already (the same work from OpenAlex or an
  arXiv-keyed corpus), the two are merged into it (cypher/merge_paper_into.cypher).

Idempotent: a second run finds nothing to change. A fresh load needs none of it (ingest
applies the same rules, `VALIDATION_VERSION` 5).
"""

from dataclasses import dataclass

from crase.graph import Graph
from crase.paper_identity import arxiv_key, paper_key

PAGE = 10_000  # papers read, and written, per transaction
MIGRATION_TIMEOUT_S = 600.0  # per transaction: a page of a large graph, or one merge


@dataclass
class MigrationReport:
    read: int = 0  # papers with an arXiv id or a DOI
    arxiv_ids: int = 0  # arXiv ids rewritten
    rekeyed: int = 0  # papers given their work's graph id
    merged: int = 0  # second nodes of a work merged into the first

    def summary(self) -> str:
        return (f"{self.read:,} papers with an arXiv id or DOI read; {self.arxiv_ids:,} "
                f"arXiv ids rewritten; {self.rekeyed:,} papers given their arXiv id as "
                f"graph id; {self.merged:,} second nodes of a work merged")


def migrate_paper_identities(graph: Graph) -> MigrationReport:
    report = MigrationReport()
    renames: list[dict[str, str]] = []
    after = ""
    while True:
        rows = graph.read("read_paper_identifiers", timeout_s=MIGRATION_TIMEOUT_S,
                          after=after, page=PAGE)
        if not rows:
            break
        after = rows[-1]["id"]
        report.read += len(rows)
        changed = [{"id": row["id"], "arxiv_id": key} for row in rows
                   if (key := arxiv_key(row["arxiv_id"], row["doi"])) != row["arxiv_id"]]
        if changed:
            graph.write("set_paper_arxiv_ids", rows=changed)
            report.arxiv_ids += len(changed)
        renames += [{"id": row["id"], "key": key} for row in rows
                    if (key := work_key(row["id"], row["doi"])) != row["id"]]
    for start in range(0, len(renames), PAGE):
        page = renames[start:start + PAGE]
        given = {row["id"] for row in graph.write("rekey_papers", rows=page)}
        report.rekeyed += len(given)
        for row in page:
            if row["id"] not in given:
                graph.write("merge_paper_into", old=row["id"], kept=row["key"])
                report.merged += 1
    return report


def work_key(paper_id: str, doi: str | None) -> str:
    """The graph id a paper keyed by its arXiv DOI gets now: its arXiv id. Other ids (a
    corpus's own, a publisher DOI's) stay as they are."""
    if not paper_id.startswith("doi:"):
        return paper_id
    return paper_key(None, doi or paper_id.removeprefix("doi:"), paper_id)
