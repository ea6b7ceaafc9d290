"""The abbreviations the corpus defines (fedlab.corpus.glossary): the Schwartz–Hearst match on
synthetic sentences in the minutes' style, and on the real corpus."""
from __future__ import annotations

import pytest

from fedlab.corpus.document import Document
from fedlab.corpus.glossary import defined_terms, long_form


def doc(text: str, n: int = 1) -> Document:
    return Document(f"minutes-2020-01-{n:02d}", "minutes", f"2020-01-{n:02d}", None, "FOMC minutes", "", text)


@pytest.mark.parametrize("before, short, expected", [
    ("the Board voted to raise the interest on excess reserves", "IOER", "interest on excess reserves"),
    # every capital at a word's start where that is possible: not the one word "economies"
    ("Equity prices rose in the emerging market economies", "EMEs", "emerging market economies"),
    # letters inside a word when it is not ("ON RRP")
    ("operations at the overnight reverse repurchase agreement", "ON RRP", "overnight reverse repurchase agreement"),
    ("spreads on commercial and industrial", "C&I", "commercial and industrial"),
    ("after the post-global financial crisis", "GFC", "global financial crisis"),
])
def test_long_form_is_the_words_the_short_form_abbreviates(before, short, expected):
    assert long_form(short, before) == expected


@pytest.mark.parametrize("before, short", [
    ("the rate was unchanged", "IOER"),  # its letters are not there
    ("in the IORB", "IORB"),  # not longer than itself, or the short form itself
])
def test_no_long_form(before, short):
    assert long_form(short, before) is None


def test_defined_terms_keeps_the_most_used_definition_and_skips_what_is_no_abbreviation():
    docs = [doc("Rates on overnight reverse repurchase agreement (ON RRP) operations were unchanged. The Desk "
                "noted usage of the overnight reverse repo (ON RRP) facility. The overnight reverse repurchase "
                "agreement (ON RRP) facility saw inflows (see figure (i)) in the fourth quarter (Q4) of 2019 (2019).", 1),
            doc("The Secured Overnight Financing Rate (SOFR) rose. Yields (on balance) fell.", 2)]
    assert defined_terms(docs) == {"ON RRP": "overnight reverse repurchase agreement",
                                   "SOFR": "secured overnight financing rate"}


def test_the_corpus_defines_the_administered_rates_and_facilities(documents):
    terms = defined_terms(documents)
    assert terms["IOER"] == "interest on excess reserves"
    assert terms["ON RRP"] == "overnight reverse repurchase agreement"
    assert terms["SOMA"] == "system open market account"
    assert all(len(long) > len(short) for short, long in terms.items())
