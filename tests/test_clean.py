"""Cleaning on real pages and on the encodings the site serves."""
from __future__ import annotations

import re

import pytest

from fedlab.corpus.clean import CleaningError, clean_minutes, clean_statement, decode

POLICY_SENTENCE = re.compile(
    r"(decided to (maintain|raise|lower|reduce|increase)|target range for the federal funds rate)", re.I
)
BOILERPLATE = ["Last Update", "For media inquiries", "Return to text", "Share", "Official websites use .gov",
               "Please enable JavaScript", "[email"]
MOJIBAKE = re.compile(r"(â€|Ã.|Â|\ufffd)")
CORE_HEADERS = [
    "Developments in Financial Markets and Open Market Operations",
    "Staff Review of the Economic Situation",
    "Staff Review of the Financial Situation",
]


def test_statements_contain_their_policy_sentence(documents):
    statements = [d for d in documents if d.doc_type == "statement"]
    assert len(statements) == 60
    meetings_with_minutes = {d.meeting_date for d in documents if d.doc_type == "minutes"}
    regular = [d for d in statements if d.meeting_date in meetings_with_minutes]
    assert len(regular) >= 50
    for d in regular:
        assert POLICY_SENTENCE.search(d.text), d.doc_id
        assert d.text.count("Voting for") == 1, d.doc_id  # no duplicated body


def test_related_links_are_not_content(documents):
    d = next(x for x in documents if x.doc_id == "statement-2019-10-11")
    assert "FAQs:" not in d.text
    assert d.text.rstrip().endswith("website.")


def test_minutes_keep_section_headers_with_offsets(documents):
    minutes = [d for d in documents if d.doc_type == "minutes"]
    assert len(minutes) == 55
    for d in minutes:
        titles = [s.title for s in d.sections]
        assert sum(h in titles for h in CORE_HEADERS) >= 2, (d.doc_id, titles)
        assert any(t.startswith("Participants' Views") for t in titles), d.doc_id
        assert any(t.startswith("Committee Policy Action") for t in titles), d.doc_id
        for s in d.sections:
            # the header stands on a line of its own at its recorded offset
            assert d.text[s.start : s.start + len(s.title)] == s.title
            assert s.start == 0 or d.text[s.start - 2 : s.start] == "\n\n"
            assert d.text[s.start + len(s.title) : s.start + len(s.title) + 2] in ("\n\n", "")
            assert s.start < s.end <= len(d.text)


def test_no_boilerplate_and_no_mojibake(documents):
    for d in documents:
        for phrase in BOILERPLATE:
            assert phrase not in d.text, (d.doc_id, phrase)
        assert not MOJIBAKE.search(d.text), d.doc_id
        assert "\r" not in d.text and "\xa0" not in d.text and "\xad" not in d.text and "\u2011" not in d.text
        assert "\n\n\n" not in d.text


def test_footnote_markers_removed_but_notes_kept(documents):
    d = next(x for x in documents if x.doc_id == "minutes-2024-01-31")
    assert "9:00 a.m.1" not in d.text and "9:00 a.m." in d.text
    assert d.sections[-1].title == "Notes"
    assert "referenced as the \"FOMC\"" in d.text[d.sections[-1].start :]


def _page(body: str) -> bytes:
    html = f"""<html><head><title>t</title></head><body><div id="article">
<div class="heading col-xs-12 col-sm-8 col-md-8"><p class="article__time">Jan 1</p><h3 class="title">Federal Reserve issues FOMC statement</h3></div>
<div class="col-xs-12 col-sm-8 col-md-8">{body}</div></div><div id="lastUpdate">Last Update: January 1, 2024</div></body></html>"""
    return ("\ufeff" + html.replace("\n", "\r\n")).encode("utf-8")


def test_encodings_bom_crlf_nbsp_soft_hyphen():
    raw = _page("<p>The Com\u00admittee decided\u00a0to   maintain\r\nthe target range.</p><p>For media inquiries, call.</p>")
    page = clean_statement(decode(raw))
    assert page.text == "The Committee decided to maintain the target range."
    assert page.last_update == "January 1, 2024"


def test_page_without_article_is_rejected():
    with pytest.raises(CleaningError):
        clean_statement("<html><body><p>hello</p></body></html>")
    with pytest.raises(CleaningError):
        clean_minutes("<html><body><div id='article'><p>short</p></div></body></html>")
