"""BM25 tokenizer: lower-casing, English stop words and a light hand-written suffix stemmer.

Numbers keep their internal punctuation ("2-1/2", "5.25", "1,000") because FOMC text is about
exact rates and ranges. Directional words (up, down, above, below, over, under, more, less, no,
not) are deliberately not stop words: they carry the policy stance.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

STOPWORDS = frozenset("""
a about after again all also am an and any are as at be because been before being between both
but by can could did do does doing during each few for from further had has have having he her
here hers herself him himself his how i if in into is it its itself just me might my myself
nor of off on once only or other our ours ourselves own same she should so some such than that
the their theirs them themselves then there these they this those through to too until very
was we were what when where which while who whom whose why will with would you your yours
yourself yourselves
""".split())

_TOKEN = re.compile(r"\d+(?:[.,/-]\d+)*|[A-Za-z]+(?:'[A-Za-z]+)*")
_VOWEL = re.compile(r"[aeiouy]")
_NO_UNDOUBLE = frozenset("lsz")


def stem(word: str) -> str:
    """Strip one inflectional suffix (-'s, -ies, -es/-s, -ing, -ed, -ly), then a final -e.

    Aims only at conflating inflections ("raise", "raised", "raises", "raising" -> "rais");
    query and documents go through the same function, so odd stems are harmless.
    """
    if word.endswith("'s"):
        word = word[:-2]
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("ied") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("sses"):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    elif word.endswith("ing") and _VOWEL.search(word[:-3]) and len(word) >= 6:
        word = _undouble(word[:-3])
    elif word.endswith("ed") and _VOWEL.search(word[:-2]) and len(word) >= 5:
        word = _undouble(word[:-2])
    elif word.endswith("ly") and len(word) >= 6:
        word = word[:-2]
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word


def _undouble(stem_: str) -> str:
    if len(stem_) >= 3 and stem_[-1] == stem_[-2] and stem_[-1] not in _NO_UNDOUBLE and not _VOWEL.match(stem_[-1]):
        return stem_[:-1]
    return stem_


@dataclass(frozen=True)
class Tokenizer:
    lowercase: bool = True
    stopwords: bool = True
    stemming: bool = True

    def __call__(self, text: str) -> list[str]:
        if self.lowercase:
            text = text.lower()
        # Typographic apostrophes appear in the scraped pages.
        text = text.replace("\u2019", "'")
        tokens = _TOKEN.findall(text)
        if self.stopwords:
            tokens = [t for t in tokens if t.lower() not in STOPWORDS]
        if self.stemming:
            tokens = [stem(t) for t in tokens]
        return tokens

