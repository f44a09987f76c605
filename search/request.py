"""What a search asks for: the query, the run parameters, and what it must not use."""

from collections.abc import Sequence
from datetime import date

from pydantic import BaseModel, Field, field_validator, model_validator

from crase.settings import SearchSettings

MIN_QUERY_CHARS = 3
# The forms of query, each ordered by its own model (search/order/model.py). The shortest
# query of the `text` form: a title and two abstract sentences have 16 words and more in
# every dev set; a title alone has a median of 8 (hep-th).
MIN_QUERY_WORDS = 12
QUERY_FORMS = ("text", "words", "papers")  # what query_form tells from a request
# The forms an order model is trained for: the query forms, and `idea` (one sentence
# describing an idea), which only a caller that says so asks in (the idea workflow).
ORDER_FORMS = (*QUERY_FORMS, "idea")
FORM_NAMES = {"text": "a query of 12 words or more", "words": "a query of fewer than 12 words",
              "papers": "a search from papers", "idea": "an idea in one sentence"}
MAX_GIVEN_PAPERS = 100  # papers a search may start from: a reference list, not a corpus


class SearchRequest(BaseModel):
    query: str = Field(
        "", max_length=4000,
        description="The research question; may be empty when the search starts from papers",
    )
    given_papers: list[str] = Field(
        default_factory=list, max_length=MAX_GIVEN_PAPERS,
        description="Graph ids of the papers the user starts from, each once: the walk's "
                    "seeds; never in the results",
    )
    params: SearchSettings = Field(default_factory=SearchSettings, description="Run parameters")
    reference_year: int | None = Field(
        None, ge=1900, le=2200,
        description="Year ages are measured from (the query's year); default: this year",
    )
    exclude: list[str] = Field(
        default_factory=list, max_length=10_000,
        description="Paper ids left out with all their edges (benchmarks: the query's source)",
    )
    seed_override: list[str] | None = Field(
        None, max_length=10_000,
        description="Use these paper ids as the seeds instead of planning and searching "
                    "(benchmarks: the seed-corruption test); stages 2-3 run unchanged. "
                    "Unlike given_papers, they may be among the results",
    )

    @field_validator("given_papers")
    @classmethod
    def each_once(cls, papers: list[str]) -> list[str]:
        return list(dict.fromkeys(papers))

    @model_validator(mode="after")
    def asks_something(self) -> "SearchRequest":
        if len(self.query.strip()) < MIN_QUERY_CHARS and not self.given_papers:
            raise ValueError(f"query is too short; give at least {MIN_QUERY_CHARS} "
                             "characters, or given_papers (papers to start from), or both")
        return self

    def age_reference(self) -> int:
        return self.reference_year or date.today().year


def query_form(query: str, given: Sequence[str]) -> str:
    """The form of a query, which picks the model that orders its list."""
    if given:
        return "papers"
    return "text" if len(query.split()) >= MIN_QUERY_WORDS else "words"
