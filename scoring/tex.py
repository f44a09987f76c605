"""Plain text from the TeX-marked text of arXiv titles and abstracts.

Raw arXiv abstracts carry inline math (`$O(3)_{\\theta=\\pi}$`), accent macros (`K\\"ahler`,
or the bare `K"ahler` of old listings) and the odd `\\cite{}`. Claims and plans want readable
words; sentence splitting wants to know where math is, so a period inside `$...$` never ends
a sentence.

The text is user text (a draft) or stored text (an abstract): every pattern runs on RE2
(crase.text_limits.compile_linear), linear in the text's length.
"""

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

from crase.text_limits import LinearMatch, compile_linear

# $$...$$, $...$, \[...\], \(...\): display math first so `$$` is not read as two `$`.
MATH = compile_linear(r"\$\$.+?\$\$|\$[^$]+\$|\\\[.+?\\\]|\\\(.+?\\\)", re.DOTALL)
REFERENCE_MACRO = compile_linear(r"\\(?:cite|ref|eqref|label)\w*\{[^}]*\}")
SPACING_MACRO = compile_linear(r"\\[,;:! ]")
WHITESPACE = compile_linear(r"\s+")


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


# --- One converter, two renderings ---------------------------------------------------
# Accent macros by the combining character they stand for. The letter-named ones (\u, \v,
# \H, \c, \k, \r) take their letter in braces or after a space: `\v{c}`, `\c c`.
ACCENTS = {"'": "\u0301", "`": "\u0300", "^": "\u0302", '"': "\u0308", "~": "\u0303",
           "=": "\u0304", ".": "\u0307", "u": "\u0306", "v": "\u030c", "H": "\u030b",
           "c": "\u0327", "k": "\u0328", "r": "\u030a"}
# Groups: the symbol accent (1) with its braced (2) or bare (3) letter, or the letter
# accent (4) with its braced (5) or bare (6) letter, a bare one after at least one space.
ACCENTED = compile_linear(
    r"""\\(?:(["'`^~=.])\s*(?:\{\s*(\\[ij]|[A-Za-z])\s*\}|(\\[ij]|[A-Za-z]))"""
    r"""|([uvHckr])(?:\s*\{\s*(\\[ij]|[A-Za-z])\s*\}|\s+(\\[ij]|[A-Za-z])))""")
# The bare umlaut of old listings (`K"ahler`, `G"odel`): a letter (1), then each `"` with
# the letter it goes on (2; `a"b"c` has two).
BARE_UMLAUTS = compile_linear(r'([A-Za-z])((?:"[A-Za-z])+)')
# Letters TeX writes as macros: \ss, \o, \aa, \l, dotless \i and \j.
LETTER_MACROS = {"ss": "ß", "o": "ø", "O": "Ø", "aa": "å", "AA": "Å", "ae": "æ", "AE": "Æ",
                 "oe": "œ", "OE": "Œ", "l": "ł", "L": "Ł", "i": "ı", "j": "ȷ"}
# Symbols that read the same in and out of math.
SYMBOL_MACROS = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε",
    "zeta": "ζ", "eta": "η", "theta": "θ", "vartheta": "ϑ", "iota": "ι", "kappa": "κ",
    "lambda": "λ", "mu": "μ", "nu": "ν", "xi": "ξ", "pi": "π", "varpi": "ϖ", "rho": "ρ",
    "sigma": "σ", "varsigma": "ς", "tau": "τ", "upsilon": "υ", "phi": "φ", "varphi": "φ",
    "chi": "χ", "psi": "ψ", "omega": "ω", "Gamma": "Γ", "Delta": "Δ", "Theta": "Θ",
    "Lambda": "Λ", "Xi": "Ξ", "Pi": "Π", "Sigma": "Σ", "Upsilon": "Υ", "Phi": "Φ",
    "Psi": "Ψ", "Omega": "Ω", "infty": "∞", "to": "→", "rightarrow": "→", "leftarrow": "←",
    "leftrightarrow": "↔", "Rightarrow": "⇒", "times": "×", "otimes": "⊗", "oplus": "⊕",
    "pm": "±", "mp": "∓", "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥", "neq": "≠",
    "ne": "≠", "sim": "∼", "simeq": "≃", "approx": "≈", "equiv": "≡", "cdot": "·",
    "partial": "∂", "nabla": "∇", "hbar": "ħ", "ell": "ℓ", "sqrt": "√", "sum": "∑",
    "prod": "∏", "int": "∫", "oint": "∮", "in": "∈", "subset": "⊂", "cup": "∪", "cap": "∩",
    "wedge": "∧", "langle": "⟨", "rangle": "⟩", "dagger": "†", "star": "⋆", "circ": "∘",
    "ldots": "…", "dots": "…", "cdots": "⋯", "prime": "′",
}
# Macros that only style their argument (`{\cal A}`, `\mathbf{x}`, `\widehat{sl}`): the
# argument stays, the macro goes.
STYLE_MACROS = {"cal", "mathcal", "mathbf", "mathrm", "mathit", "mathbb", "mathfrak", "bf",
                "rm", "it", "em", "sl", "sf", "tt", "textrm", "textbf", "textit", "emph",
                "text", "mbox", "hbox", "widehat", "hat", "widetilde", "tilde", "bar",
                "overline", "underline", "vec", "dot", "ddot", "left", "right", "big", "Big",
                "bigg", "Bigg", "displaystyle"}
ESCAPED = compile_linear(r"\\([&%$#_{}])")
ANY_MACRO = compile_linear(r"\\([A-Za-z]+)\*?(\s*)")
# `_{...}` and `^{...}` without nested braces: their braces carry meaning, the others not.
SCRIPT_GROUP = compile_linear(r"([_^])\{([^{}]*)\}")
# A brace, or one escaped (group 1, kept); the Unicode rendering drops the others.
BRACE = compile_linear(r"(\\[{}])|[{}]")
BRACE_OR_DOLLAR = compile_linear(r"[{}$]")
SPACE_BEFORE_PUNCTUATION = compile_linear(r"\s+([,.;:!?)])")
# Stand-ins while the text is taken apart: kept braces, and an escaped dollar (which is
# no math delimiter).
OPEN_KEPT, CLOSE_KEPT, DOLLAR = "\x01", "\x02", "\x03"


@dataclass(frozen=True)
class Rendering:
    """What one reading of a TeX text writes for each thing the converter finds; finding
    them (accents, macros, math, escapes) is shared, so a fix to it serves both."""
    accent: Callable[[str, str], str]  # a letter and the combining mark TeX put on it
    macro: Callable[[str, str], str]   # a macro's name and the space TeX read after it
    prose: Callable[[str], str]        # the text between formulas, its macros done
    math: Callable[[str], str]         # a formula's content, its macros done
    finish: Callable[[str], str]       # the whole text again, before spaces collapse


def convert(text: str, rendering: Rendering) -> str:
    text = REFERENCE_MACRO.sub(" ", text.replace("\\$", DOLLAR))
    text = ACCENTED.sub(lambda m: rendering.accent(accented_letter(m), accent_mark(m)), text)
    text = BARE_UMLAUTS.sub(lambda m: bare_umlauts(m, rendering), text)
    text = SPACING_MACRO.sub(" ", text).replace("~", " ")
    pieces, last = [], 0
    # Macros are replaced span by span: `$\chi$SB` must not read as the macro `\chiSB`.
    for match in MATH.finditer(text):
        pieces += [rendering.prose(macros(text[last:match.start()], rendering)),
                   rendering.math(macros(math_content(match.group(0)), rendering))]
        last = match.end()
    pieces.append(rendering.prose(macros(text[last:], rendering)))
    text = rendering.finish("".join(pieces)).replace(DOLLAR, "$")
    return WHITESPACE.sub(" ", ESCAPED.sub(r"\1", text)).strip()


def macros(text: str, rendering: Rendering) -> str:
    return ANY_MACRO.sub(lambda m: rendering.macro(m.group(1), m.group(2)), text)


def accented_letter(match: LinearMatch) -> str:
    letter = match.group(2) or match.group(3) or match.group(5) or match.group(6)
    return {"\\i": "i", "\\j": "j"}.get(letter, letter)


def accent_mark(match: LinearMatch) -> str:
    return ACCENTS[match.group(1) or match.group(4)]


def bare_umlauts(match: LinearMatch, rendering: Rendering) -> str:
    marked = match.group(2)
    return match.group(1) + "".join(rendering.accent(marked[i], ACCENTS['"'])
                                    for i in range(1, len(marked), 2))


# --- Plain words: what claims, plans, embeddings and matching read ------------------------
PLAIN = Rendering(
    accent=lambda letter, _mark: letter,  # `K\"ahler` -> `Kahler`, as a search types it
    macro=lambda name, space: name + space,  # `\theta` -> `theta`: a word the encoder knows
    prose=lambda text: text,
    math=lambda content: f" {content} ",
    # Braces and the formulas' `$` go; a space left before punctuation goes with them.
    finish=lambda text: SPACE_BEFORE_PUNCTUATION.sub(r"\1", BRACE_OR_DOLLAR.sub("", text)),
)


def plain_text(text: str) -> str:
    """Readable words: math delimiters, braces and backslashes gone, macro names kept as
    words (`\\theta` -> `theta`), accents reduced to their letter, whitespace collapsed."""
    return convert(text, PLAIN)


# --- Unicode: what an export to a reference manager or a spreadsheet shows ----------------
def unicode_prose(text: str) -> str:
    """Typography of the text around math: TeX quotes and dashes."""
    return text.replace("``", "“").replace("''", "”").replace("---", "—").replace("--", "–")


def unicode_finish(text: str) -> str:
    text = SCRIPT_GROUP.sub(script_group, text)
    text = BRACE.sub(lambda m: m.group(1) or "", text)  # grouping, case-protecting braces
    return unicodedata.normalize("NFC", text.replace(OPEN_KEPT, "{").replace(CLOSE_KEPT, "}"))


UNICODE = Rendering(accent=lambda letter, mark: unicodedata.normalize("NFC", letter + mark),
                    macro=lambda name, space: replace_macro(name, space), prose=unicode_prose,
                    math=str.strip, finish=unicode_finish)


def tex_to_unicode(text: str) -> str:
    """Plain Unicode for a reader: `M\\'aximo Ba\\~nados` -> `Máximo Bañados`,
    `{D}-branes` -> `D-branes`, `$AdS_3$` -> `AdS_3`, `$W_{1+\\infty}$` -> `W_{1+∞}`.

    Accents become their composed letters, escapes (`\\&`) their character, Greek letters
    and common symbols their Unicode sign, style macros leave their argument; math loses
    its `$` but keeps `_`, `^` and primes (with the braces of a `_{...}` group), so
    formulas stay readable. Whitespace is collapsed."""
    return convert(text, UNICODE)


def script_group(match: LinearMatch) -> str:
    inner = match.group(2).strip()
    if len(inner) == 1:
        return match.group(1) + inner  # `AdS_{3}` reads as `AdS_3`
    return f"{match.group(1)}{OPEN_KEPT}{inner}{CLOSE_KEPT}"


def replace_macro(name: str, space: str) -> str:
    if name in STYLE_MACROS:
        return ""
    sign = SYMBOL_MACROS.get(name) or LETTER_MACROS.get(name)
    # An unknown macro keeps its name, which reads better than a backslash. The space
    # after a macro name is TeX's separator: one stays where the name ends a word.
    return (sign or name) + (" " if space else "")
