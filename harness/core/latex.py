"""Text that goes into LaTeX: one escaper for every table the product writes, and the width a
text takes when typeset, so a table can be laid out to fit before anyone compiles it.

Every character LaTeX treats specially in text (``\\ & % $ # _ { } ~ ^``) and the three that
the default OT1 font encoding prints as other glyphs (``< > |``) become the text commands that
print them; line breaks become spaces.  A name pasted into a paper prints as it was.

Widths are Computer Modern Roman's (``cmr10``, the ``article`` default), measured with
``\\settowidth`` for every printable ASCII character at 10 pt; other characters count as a
wide 10 pt, so an estimate errs towards too wide, never too narrow.
"""

from __future__ import annotations

_LATEX = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
    "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
    "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}",
    "\n": " ", "\r": " ",
}

#: characters after which a long name may break across lines (``\\allowbreak``)
_BREAK_AFTER = frozenset("-_./:+@|,;=")
#: a word longer than this gets break points (after punctuation, and every this many
#: characters without any)
_BREAK_EVERY = 20


def escape_latex(text: object) -> str:
    """``text`` as literal LaTeX text (every special character printed as itself)."""
    return "".join(_LATEX.get(ch, ch) for ch in str(text))


def breakable(text: object) -> str:
    """:func:`escape_latex`, with break points inside every word longer than 20 characters
    (after punctuation, and every 20 characters without any), so a long name in a paragraph
    wraps to its width instead of running into the margin."""
    words = str(text).split(" ")
    return " ".join(_break_word(w) if len(w) > _BREAK_EVERY else escape_latex(w) for w in words)


def _break_word(word: str) -> str:
    out, since = [], 0
    for ch in word:
        out.append(_LATEX.get(ch, ch))
        since += 1
        if ch in _BREAK_AFTER or since >= _BREAK_EVERY:
            out.append(r"\allowbreak{}")
            since = 0
    return "".join(out)


#: width in pt of each printable ASCII character in cmr10 at 10 pt (OT1; ``\\settowidth``)
_WIDTHS_10PT = {
    **dict.fromkeys("0123456789", 5.0),
    "a": 5.0, "b": 5.56, "c": 4.44, "d": 5.56, "e": 4.44, "f": 3.06, "g": 5.0, "h": 5.56,
    "i": 2.78, "j": 3.06, "k": 5.28, "l": 2.78, "m": 8.33, "n": 5.56, "o": 5.0, "p": 5.56,
    "q": 5.28, "r": 3.92, "s": 3.94, "t": 3.89, "u": 5.56, "v": 5.28, "w": 7.22, "x": 5.28,
    "y": 5.28, "z": 4.44, "A": 7.5, "B": 7.08, "C": 7.22, "D": 7.64, "E": 6.81, "F": 6.53,
    "G": 7.85, "H": 7.5, "I": 3.61, "J": 5.14, "K": 7.78, "L": 6.25, "M": 9.17, "N": 7.5,
    "O": 7.78, "P": 6.81, "Q": 7.78, "R": 7.36, "S": 5.56, "T": 7.22, "U": 7.5, "V": 7.5,
    "W": 10.28, "X": 7.5, "Y": 7.5, "Z": 6.11, "!": 2.78, '"': 5.0, "#": 8.33, "$": 5.0,
    "%": 8.33, "&": 7.78, "'": 2.78, "(": 3.89, ")": 3.89, "*": 5.0, "+": 7.78, ",": 2.78,
    "-": 3.33, ".": 2.78, "/": 5.0, ":": 2.78, ";": 2.78, "<": 7.78, "=": 7.78, ">": 7.78,
    "?": 4.72, "@": 7.78, "[": 2.78, "\\": 5.0, "]": 2.78, "^": 5.0, "_": 3.6, "`": 2.78,
    "{": 5.0, "|": 2.78, "}": 5.0, "~": 5.0, " ": 3.33,
}
#: the widest glyph of cmr10, for any character not in the table
_UNKNOWN_WIDTH = 10.28
#: bold extended digits and letters are about 15 % wider than roman ones
BOLD_FACTOR = 1.15
#: font sizes of the standard classes at 10 pt: ``\\small`` 9 pt, ``\\footnotesize`` 8 pt,
#: ``\\scriptsize`` 7 pt
SIZES = {"normalsize": 10.0, "small": 9.0, "footnotesize": 8.0, "scriptsize": 7.0}
#: how much wider the design sizes cmr9, cmr8, cmr7 set their glyphs than cmr10 scaled down
#: (the digits: 4.6, 4.25, 3.97 pt against 4.5, 4.0, 3.5)
OPTICAL = {"normalsize": 1.0, "small": 1.023, "footnotesize": 1.0625, "scriptsize": 1.134}


def text_width(text: object, size: str = "normalsize", bold: bool = False) -> float:
    """The width in pt of ``text`` (unescaped) typeset in cmr at ``size``."""
    width = sum(_WIDTHS_10PT.get(ch, _UNKNOWN_WIDTH) for ch in str(text))
    return width * SIZES[size] / 10.0 * OPTICAL[size] * (BOLD_FACTOR if bold else 1.0)
