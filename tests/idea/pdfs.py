"""Real PDFs for the tests, written with PyMuPDF."""

from pathlib import Path

import pymupdf

FILLER = ("The weather station recorded routine values for temperature and humidity across "
          "the season, and the archive keeps them for later reference. ")


def make_pdf(path: Path, pages: list[str]) -> Path:
    document = pymupdf.open()
    for text in pages:
        page = document.new_page(width=595, height=842)
        rect = pymupdf.Rect(40, 40, 555, 802)
        left = page.insert_textbox(rect, text, fontsize=7, fontname="helv")
        assert left >= 0, "the fixture text does not fit on one page"
    path.parent.mkdir(parents=True, exist_ok=True)
    document.save(path)
    document.close()
    return path


def paper_pages() -> list[str]:
    """Four pages: filler, then sections whose text uses the idea's terms."""
    method = ("\n3 Method\nWe build a graph over the support images and run message passing "
              "with a graph neural network so that few-shot classification uses the "
              "relations between labelled examples. ")
    experiments = ("\n4 Experiments\nWe evaluate few-shot image classification on benchmark "
                   "datasets; the graph neural network improves accuracy over prototype "
                   "baselines. ")
    conclusion = ("\n5 Conclusion\nMessage passing between few-shot examples helps image "
                  "classification; future work studies larger graphs. ")
    return [
        "1 Introduction\n" + FILLER * 14,
        FILLER * 6 + method + FILLER * 6,
        FILLER * 5 + experiments + FILLER * 7,
        FILLER * 4 + conclusion + FILLER * 3,
    ]
