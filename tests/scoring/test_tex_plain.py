"""TeX to plain words (crase.scoring.tex.plain_text), what claims, plans and embeddings read.

Both readings share one converter (`convert`): the rows marked "shared" were fixed for
one reading and missed by the other while each had its own regular expressions."""

import pytest

from crase.scoring.tex import plain_text, tex_to_unicode


@pytest.mark.parametrize(("tex", "plain"), [
    (r"K\"ahler and K\"{a}hler", "Kahler and Kahler"),
    (r'K"ahler manifolds', "Kahler manifolds"),  # the bare umlaut of old listings
    (r"$O(3)_{\theta=\pi}$ models", "O(3)_theta=pi models"),
    (r"in $d=4$ . The end", "in d=4. The end"),
    (r"as shown in \cite{Witten98} , the", "as shown in, the"),
    (r"Ro\v cek and \v{C}ech", "Rocek and Cech"),  # shared: was "Rov cek", "vCech"
    (r"Mart\'{\i}n", "Martin"),  # shared: was "Mart\'in"
    (r"15\% of models \& more", "15% of models & more"),  # shared: backslashes stayed
])
def test_plain_text(tex: str, plain: str) -> None:
    assert plain_text(tex) == plain


@pytest.mark.parametrize(("tex", "unicode"), [
    (r"conjectured in \cite{FKN91} for", "conjectured in for"),  # shared: was "citeFKN91"
    (r"Ro\v cek and \v{C}ech", "Roček and Čech"),
    (r"Mart\'{\i}n", "Martín"),
])
def test_both_readings_find_the_same_marks(tex: str, unicode: str) -> None:
    assert tex_to_unicode(tex) == unicode
