"""Citation grounding: no citation outside the retrieved set ever reaches the user.

Property-based: hypothesis writes adversarial answer texts (random and malformed markers,
N = 0 / negative / huge / out of range, unicode digits, nested brackets, markers split across
text) and the invariants are checked on every one.
"""
from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from fedlab.agent.citations import final_markers, ground_citations

CONTEXT = ["c1", "c2", "c3", "c4", "c5"]
RETRIEVED = {"c1", "c2", "c3", "c5", "c9"}  # c4 is in the context but (adversarially) not retrieved

numbers = st.one_of(st.integers(-3, 8), st.integers(10**6, 10**40), st.sampled_from(["٣", "３", "0", "-1", "01", "1e3"]))


@st.composite
def markers(draw):
    n = str(draw(numbers))
    form = draw(st.sampled_from([
        "[Source {n}]", "[source {n}]", "[Sources {n} and 2]", "[Source {n}, Source 3]", "[Source {n}; 1]",
        "[{n}]", "[Source {n}", "Source {n}]", "[[Source {n}]]", "[Source [Source {n}]]", "[Source {n}][Source 2]",
        "[Source\n{n}]", "[ Source {n} ]", "[Source {n}-3]", "[Source x{n}]", "［Source {n}］", "[[Source 99]{n}]",
        "[Source {n}, Source 99, Source 0]", "[Sources {n} & {n}]",
    ]))
    return form.format(n=n)


texts = st.lists(st.one_of(markers(), st.text(alphabet=st.characters(codec="utf-8"), max_size=12),
                           st.sampled_from(["[", "]", " ", ".", "Source", "1", "[1", "2]", "\ue000", "\ue001"])),
                 max_size=25).map("".join)


def check_invariants(text: str):
    g = ground_citations(text, CONTEXT, RETRIEVED)
    # every citation points at a retrieved chunk, at a real context position
    assert all(1 <= pos <= len(CONTEXT) and CONTEXT[pos - 1] in RETRIEVED for pos in g.cited)
    assert len(set(g.cited)) == len(g.cited)
    # the final text's markers are exactly 1..m, numbered by first appearance
    shown = final_markers(g.text)
    m = len(g.cited)
    assert set(shown) == set(range(1, m + 1))
    assert list(dict.fromkeys(shown)) == list(range(1, m + 1))
    # nothing else in the text reads as a numeric citation (any digits, any spacing)
    assert re.findall(r"\[\s*\d+\s*\]", g.text) == [f"[{n}]" for n in shown]
    return g


@settings(max_examples=600, deadline=None)
@given(texts)
def test_grounding_invariants_hold_for_adversarial_answers(text):
    check_invariants(text)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-5, 12), min_size=1, max_size=12))
def test_numbering_follows_first_appearance_of_valid_positions(positions):
    text = " ".join(f"claim {i} [Source {p}]." for i, p in enumerate(positions))
    g = check_invariants(text)
    valid = [p for p in positions if 1 <= p <= len(CONTEXT) and CONTEXT[p - 1] in RETRIEVED]
    assert g.cited == list(dict.fromkeys(valid))
    assert g.dropped == len(positions) - len(valid)


def test_groups_are_split_and_renumbered():
    g = ground_citations("A [Source 3]. B [Source 1, Source 3]. C [Sources 2 and 5][Source 5].", CONTEXT, RETRIEVED)
    assert g.text == "A [1]. B [2][1]. C [3][4][4]."
    assert g.cited == [3, 1, 2, 5]


def test_invalid_markers_are_removed_not_guessed():
    g = ground_citations("X [Source 4] Y [Source 0] Z [Source 7] [2] [Source ٣] [Source 1-3].", CONTEXT, RETRIEVED)
    assert g.cited == [] and final_markers(g.text) == []
    assert g.dropped == 6
    assert "Source" not in g.text


def test_removal_cannot_forge_a_marker():
    g = ground_citations("rates rose [[Source 99]1] and [Source 2]", CONTEXT, RETRIEVED)
    assert final_markers(g.text) == [1] and g.cited == [2]
