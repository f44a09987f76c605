"""The arXiv API: the listing of one arXiv identifier, read from its Atom feed as a
PaperRecord (the idea workflow resolves recalled arXiv ids with it; PDFs are fetched by
`crase.idea.pdf_acquisition`)."""

import xml.etree.ElementTree as ElementTree

from crase.errors import ProviderReplyInvalid
from crase.ingest.provider_http import ProviderClient
from crase.ingest.records import PaperRecord

ATOM = {"atom": "http://www.w3.org/2005/Atom", "arxiv": "http://arxiv.org/schemas/atom"}


def arxiv_record(client: ProviderClient, arxiv_id: str) -> PaperRecord | None:
    """The arXiv listing of one identifier, or None when arXiv has no such entry."""
    response = client.get(f"{client.settings.arxiv_url.rstrip('/')}/query",
                          {"id_list": arxiv_id, "max_results": 1})
    try:
        root = ElementTree.fromstring(response.content)
    except ElementTree.ParseError as err:
        raise ProviderReplyInvalid(f"arXiv {arxiv_id}: the reply is not Atom XML") from err
    entry = root.find("atom:entry", ATOM)
    return None if entry is None else entry_record(entry, arxiv_id)


def entry_record(entry: ElementTree.Element, arxiv_id: str) -> PaperRecord | None:
    """An Atom entry as a record; None for arXiv's way of saying "no such id": an entry
    without a title or titled "Error"."""
    title = text_of(entry, "atom:title")
    if not title or title == "Error":
        return None
    published = entry.findtext("atom:published", default="", namespaces=ATOM)
    return PaperRecord(
        id=None, title=title, abstract=text_of(entry, "atom:summary"),
        year=int(published[:4]) if published[:4].isdigit() else None,
        doi=entry.findtext("arxiv:doi", default=None, namespaces=ATOM), arxiv_id=arxiv_id,
        authors=[text_of(author, "atom:name") for author in entry.findall("atom:author", ATOM)],
        source="arxiv",
    )


def text_of(element: ElementTree.Element, path: str) -> str:
    # Atom text is wrapped and indented as the feed likes; a record wants single spaces.
    return " ".join(element.findtext(path, default="", namespaces=ATOM).split())
