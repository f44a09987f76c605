"""Run by tests/foundation/test_server.py in the GDS client's own virtualenv (var/gds-client,
`make gds-client`), never by pytest or in .venv: as a user would, the GDS Python client
projects the papers the test wrote, streams PageRank over them and drops the projection.
It prints one line of JSON for the test to check.

    python gds_client_pagerank.py BOLT_URI      (the password in NEO4J_PASSWORD)
"""

import json
import os
import sys
from typing import Any

from graphdatascience import GraphDataScience

GRAPH_NAME = "client_check"


def run_pagerank(uri: str, password: str) -> dict[str, Any]:
    gds = GraphDataScience(
        uri, auth=("neo4j", password), arrow=False,
        # Its progress bar sorts with a pandas argument pandas deprecates; nothing to show.
        show_progress=False,
    )
    try:
        projection, _ = gds.graph.project.native(GRAPH_NAME, "Paper", "CITES")
        projected = {"name": projection.name(), "nodes": projection.node_count(),
                     "relationships": projection.relationship_count()}
        scores = gds.page_rank.stream(projection)
        dropped = [info.graph_name for info in gds.graph.drop(projection)]
        return {"projection": projected, "scores": [float(s) for s in scores["score"]],
                "dropped": dropped, "exists_after_drop": projection.exists()}
    finally:
        gds.close()


if __name__ == "__main__":
    print(json.dumps(run_pagerank(sys.argv[1], os.environ["NEO4J_PASSWORD"])))
