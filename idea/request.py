"""What an idea run asks for: the idea, the mode, eligibility, exclusions, local PDFs and the
budgets. JSON in, so the CLI, the Python function and the HTTP API share one shape.

An HTTP request sets less: `IdeaParams`, budgets and gates only, merged into the server's
own IdeaSettings by `merge_idea_params`. Where to fetch PDFs, whether to reach providers,
how large a download or how long a wait may be are the operator's (CRASE_IDEA__*).
"""

from typing import ClassVar, Literal

from pydantic import BaseModel, Field, model_validator

from crase.errors import ParameterAboveServerCap
from crase.settings import IdeaSettings, RequestParams, setting

IdeaMode = Literal["retrieval_eval", "full_report"]


class IdeaRequest(BaseModel):
    idea: str = Field(..., min_length=3, max_length=8000,
                      description="The research idea, kept verbatim through every stage")
    mode: IdeaMode = Field(
        "retrieval_eval",
        description="retrieval_eval ends after the ranking and the audit; full_report adds "
                    "a report written from the saved evidence")
    year_min: int | None = Field(None, ge=1600, le=2200,
                                 description="Earliest eligible publication year")
    year_max: int | None = Field(None, ge=1600, le=2200,
                                 description="Latest eligible publication year")
    exclude: list[str] = Field(
        default_factory=list, max_length=10_000,
        description="Paper ids left out with their edges (benchmarks: the query's source)")
    pdf_dir: str | None = Field(
        None, description="Local folder of PDFs named by paper id or arXiv id ('/' as '_')")
    providers: bool | None = Field(
        None, description="Probe and use external providers; unset = idea.use_providers")
    params: IdeaSettings = Field(default_factory=IdeaSettings, description="Budgets and gates")

    @model_validator(mode="after")
    def check_years(self) -> "IdeaRequest":
        if self.year_min is not None and self.year_max is not None \
                and self.year_min > self.year_max:
            raise ValueError(f"year_min {self.year_min} is after year_max {self.year_max}")
        return self


# Budgets a request may lower but not raise past the server's own: each costs model calls,
# database reads or text sent to a model.
IDEA_BUDGETS = (
    "min_facets", "max_facets", "max_queries", "hits_per_query", "recall_max_papers",
    "selection_budget", "neighbour_seeds", "neighbour_batch", "neighbour_per_seed",
    "neighbour_budget", "neighbour_read_limit", "provider_hits_per_query",
    "shortlist_assessed", "shortlist_buffer", "window_chars", "windows_per_paper")


class IdeaParams(RequestParams):
    """Budgets and gates of one idea run: a budget at most the server's own, a gate within
    its published limits; the fields left out keep the server's values."""

    settings_model: ClassVar[type[BaseModel]] = IdeaSettings
    settings_prefix: ClassVar[str] = "CRASE_IDEA__"

    min_facets: int = setting(IdeaSettings, "min_facets")
    max_facets: int = setting(IdeaSettings, "max_facets")
    max_queries: int = setting(IdeaSettings, "max_queries")
    hits_per_query: int = setting(IdeaSettings, "hits_per_query")
    recall_max_papers: int = setting(IdeaSettings, "recall_max_papers")
    selection_budget: int = setting(IdeaSettings, "selection_budget")
    protect_corroborated: int = setting(IdeaSettings, "protect_corroborated")
    protect_strong_rank: int = setting(IdeaSettings, "protect_strong_rank")
    strong_rank_cutoff: int = setting(IdeaSettings, "strong_rank_cutoff")
    protect_missing_abstract: int = setting(IdeaSettings, "protect_missing_abstract")
    neighbour_seeds: int = setting(IdeaSettings, "neighbour_seeds")
    neighbour_batch: int = setting(IdeaSettings, "neighbour_batch")
    neighbour_per_seed: int = setting(IdeaSettings, "neighbour_per_seed")
    neighbour_budget: int = setting(IdeaSettings, "neighbour_budget")
    neighbour_read_limit: int = setting(IdeaSettings, "neighbour_read_limit")
    provider_hits_per_query: int = setting(IdeaSettings, "provider_hits_per_query")
    shortlist_assessed: int = setting(IdeaSettings, "shortlist_assessed")
    shortlist_buffer: int = setting(IdeaSettings, "shortlist_buffer")
    window_chars: int = setting(IdeaSettings, "window_chars")
    windows_per_paper: int = setting(IdeaSettings, "windows_per_paper")
    term_frequency_cap: int = setting(IdeaSettings, "term_frequency_cap")


def merge_idea_params(given: IdeaParams | None, server: IdeaSettings) -> IdeaSettings:
    """The server's own settings with what the request gave. ParameterAboveServerCap for a
    budget above the server's; pydantic's ValidationError where fields disagree."""
    values = given.model_dump(exclude_unset=True) if given else {}
    over = [f"params.{name}: {values[name]} is above this server's {getattr(server, name)} "
            f"(CRASE_IDEA__{name.upper()}); a request may lower a budget, not raise it"
            for name in IDEA_BUDGETS if name in values and values[name] > getattr(server, name)]
    if over:
        raise ParameterAboveServerCap("; ".join(over))
    return IdeaSettings.model_validate({**server.model_dump(), **values})
