"""Key-fact matching: does an answer state a fact, however the numbers are written?

``normalize`` maps a text to a canonical form in which equivalent spellings coincide:

- case and whitespace (any Unicode space) are folded; citation markers ``[1]``, ``[2, 3]`` go;
- every dash (- ‐ ‑ ‒ – — ― −) is one hyphen; a hyphen or punctuation between words is a space,
  so "75-basis-point" reads "75 basis point" and "one-half" reads "one half";
- "%", "per cent", "pct" read "percent" ("2%" = "2 percent");
- fractions become decimals: "1/2", "½", "one-half", "one half", "a half", "half" -> 0.5;
  "1/4", "¼", "one quarter", "a quarter", "quarter point" -> 0.25; "three quarters" -> 0.75;
  mixed numbers "2-1/4", "2 1/4", "2¼", "2 and a quarter", "two and one-half" -> 2.25, 2.5;
- number words zero–nineteen, the tens and their compounds ("twenty-five") become digits;
- decimals lose trailing zeros ("2.10" = "2.1", "2.0" = "2") and thousands separators go.

``contains_fact`` then looks for the normalised fact in the normalised answer on word
boundaries: a fact may not start inside a word or number ("arp" is not in "sharp", "5 percent"
is not in "0.5 percent"), a fact ending in a digit may not continue as a number ("2" is not in
"25" or "2.5"), and a fact ending in a letter may take a suffix ("basis point" is in "basis
points", "hike" in "hikes").
"""
from __future__ import annotations

import re
from fractions import Fraction
from typing import Iterable

_UNITS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
          "fifteen sixteen seventeen eighteen nineteen").split()
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
         "ninety": 90}
WORD_NUMBERS: dict[str, int] = {w: i for i, w in enumerate(_UNITS)} | _TENS
_VULGAR = {"½": "1/2", "⅓": "1/3", "⅔": "2/3", "¼": "1/4", "¾": "3/4", "⅕": "1/5", "⅛": "1/8", "⅜": "3/8",
           "⅝": "5/8", "⅞": "7/8"}
_DASHES = re.compile("[\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d]")
_MARKERS = re.compile(r"\[\s*\d+(?:\s*[,;]\s*\d+)*\s*\]")
_NUM_WORD = "|".join(sorted(WORD_NUMBERS, key=len, reverse=True))
_COMPOUND = re.compile(rf"\b({'|'.join(_TENS)}) ({'|'.join(_UNITS[1:10])})\b")
_WORD = re.compile(rf"\b({_NUM_WORD})\b")
# a fraction: not part of a date such as 12/31/2019 (small denominators only)
_FRAC = r"(\d+)/(\d+)(?![\d/])"
_MIXED = re.compile(rf"(?<![\d./])(\d+)(?: |-| - | and )?(?<![\d]){_FRAC}")
_PLAIN_FRAC = re.compile(rf"(?<![\d./]){_FRAC}")
_DECIMAL = re.compile(r"(?<![\d.])(\d+)\.(\d+)(?![\d.])")
_PERCENT_RANGE = re.compile(r"(\d) percent (to|and|or) (\d[\d.]* percent)")
MAX_DENOMINATOR = 16


def strip_markers(text: str) -> str:
    """Drop ``[n]`` citation markers (their digits would otherwise read as numbers)."""
    return _MARKERS.sub(" ", text)


def _number(value: Fraction) -> str:
    text = f"{float(value):.4f}".rstrip("0").rstrip(".")
    return text or "0"


def _proper(num: str, den: str) -> Fraction | None:
    n, d = int(num), int(den)
    if 1 < d <= MAX_DENOMINATOR and 0 < n < d:
        return Fraction(n, d)
    return None


def _mixed(m: re.Match) -> str:
    frac = _proper(m[2], m[3])
    if frac is None:
        return m[0]
    return _number(int(m[1]) + frac)


def _plain(m: re.Match) -> str:
    frac = _proper(m[1], m[2])
    return m[0] if frac is None else _number(frac)


def _words_to_fractions(text: str) -> str:
    """Spelled-out fractions to n/d, so the numeric passes below see them."""
    text = re.sub(r"\b(?:one|a) half\b|\bhalf(?: of)? a\b|\bhalf\b", " 1/2 ", text)
    text = re.sub(r"\bthree (?:quarters?|fourths?)\b", " 3/4 ", text)
    text = re.sub(r"\b(?:one|a) (?:quarter|fourth)\b|\bquarter(?= (?:percentage )?points?\b)", " 1/4 ", text)
    text = re.sub(r"\b(?:one|a) third\b", " 1/3 ", text)
    text = re.sub(r"\btwo thirds\b", " 2/3 ", text)
    text = re.sub(r"\b(?:one|an|a) eighth\b", " 1/8 ", text)
    return text


def _words_to_digits(text: str) -> str:
    text = _COMPOUND.sub(lambda m: str(_TENS[m[1]] + WORD_NUMBERS[m[2]]), text)
    return _WORD.sub(lambda m: str(WORD_NUMBERS[m[1]]), text)


def normalize(text: str) -> str:
    """The canonical form described in the module docstring."""
    s = strip_markers(text)
    for sym, frac in _VULGAR.items():  # "2½" -> "2 1/2", "½" -> "1/2"
        s = re.sub(rf"(\d)\s*{sym}", rf"\1 {frac}", s).replace(sym, f" {frac} ")
    s = s.replace("\u2044", "/")
    s = _DASHES.sub("-", s).casefold()
    s = re.sub(r"\s*%|\bper ?cent\b|\bpct\b", " percent", s)
    s = re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", s)  # 1,000 -> 1000
    s = re.sub(r"(?<=[a-z])-(?=[a-z])", " ", s)  # one-half, twenty-five, basis-point
    s = re.sub(r"[^\w\s$./%-]", " ", s)  # quotes, brackets, commas, semicolons...
    s = re.sub(r"\s+", " ", s)
    s = _words_to_fractions(s)
    s = _words_to_digits(s)
    s = re.sub(r"\s+", " ", s)
    s = _MIXED.sub(_mixed, s)
    s = _PLAIN_FRAC.sub(_plain, s)
    s = _DECIMAL.sub(lambda m: _number(Fraction(m[0])), s)
    s = re.sub(r"(?<![\d])\.|\.(?!\d)", " ", s)  # a period that is not a decimal point
    s = s.replace("-", " ")  # the remaining hyphens: ranges, compounds, dashes
    s = re.sub(r"\s+", " ", s).strip()
    return _PERCENT_RANGE.sub(r"\1 \2 \3", s)  # "2 percent to 3 percent" -> "2 to 3 percent"


def contains_fact(answer: str, fact: str) -> bool:
    """True when the normalised ``fact`` occurs in the normalised ``answer`` (module docstring)."""
    needle = normalize(fact)
    if not needle:
        return True
    end = r"(?!\d|\.\d|/\d)" if needle[-1].isdigit() else ""
    return re.search(rf"(?<![\w.])(?<!\d\.){re.escape(needle)}{end}", normalize(answer)) is not None


def missing_facts(answer: str, facts: Iterable[str]) -> list[str]:
    """The facts ``answer`` does not state, in the given order."""
    return [f for f in facts if not contains_fact(answer, f)]
