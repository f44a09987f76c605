"""Plain text from the TeX-marked text of arXiv titles and abstracts.

Raw arXiv abstracts carry inline math (`$O(3)_{\\theta=\\pi}$`), accent macros (`K\\"ahler`,
or the bare `K"ahler` of old listings) and the odd `\\cite{}`. Claims and plans want readable
words; sentence splitting wants to know where math is, so a period inside `$...$` never ends
a sentence.
"""

import re

# $$...$$, $...$, \[...\], \(...\): display math first so `$$` is not read as two `$`.
MATH = re.compile(r"\$\$.+?\$\$|\$[^$]+\$|\\\[.+?\\\]|\\\(.+?\\\)", re.DOTALL)
# \"a, \'e, \`e, \^o, \~n, with or without braces: keep the base letter.
ACCENT_MACRO = re.compile(r"""\\["'`^~=.](?:\{(\w)\}|(\w))""")
# The bare umlaut of old listings: K"ahler, G"odel (a quote between two letters).
BARE_UMLAUT = re.compile(r'(?<=[A-Za-z])"(?=[A-Za-z])')
REFERENCE_MACRO = re.compile(r"\\(?:cite|ref|eqref|label)\w*\{[^}]*\}")
SPACING_MACRO = re.compile(r"\\[,;:! ]")
NAMED_MACRO = re.compile(r"\\([A-Za-z]+)\*?")
WHITESPACE = re.compile(r"\s+")


def math_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of every inline or display math span."""
    return [match.span() for match in MATH.finditer(text)]


def mask_math(text: str) -> str:
    """Same length as `text`, math content replaced by `x` (delimiters kept), so offsets
    found in the mask are offsets in the original. A period right before the closing
    delimiter (`$g \\to 0.$`) is kept: it ends the sentence, not the formula."""
    chars = list(text)
    for start, end in math_spans(text):
        for i in range(start + 1, end - 1):
            if chars[i] != "$" and not (chars[i] == "." and i == end - 2):
                chars[i] = "x"
    return "".join(chars)


def math_content(span: str) -> str:
    """The inside of one math span, without its delimiters."""
    if span.startswith("$$"):
        return span[2:-2]
    if span.startswith("$"):
        return span[1:-1]
    return span[2:-2]  # \[...\] and \(...\)


def plain_text(text: str) -> str:
    """Readable text: math delimiters, braces and backslashes gone, macro names kept as
    words (`\\theta` -> `theta`), accents reduced to their letter, whitespace collapsed."""
    text = REFERENCE_MACRO.sub(" ", text)
    text = ACCENT_MACRO.sub(lambda m: m.group(1) or m.group(2), text)
    text = BARE_UMLAUT.sub("", text)
    text = SPACING_MACRO.sub(" ", text)
    text = MATH.sub(lambda m: " " + math_content(m.group(0)) + " ", text)
    text = NAMED_MACRO.sub(r"\1", text)
    text = text.replace("{", "").replace("}", "").replace("~", " ").replace("$", "")
    text = re.sub(r"\s+([,.;:!?)])", r"\1", text)
    return WHITESPACE.sub(" ", text).strip()
