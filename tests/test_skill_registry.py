"""The registry of skills: every skill has the interface, a docs page, and its place in the order."""
from __future__ import annotations

from pathlib import Path

from fedlab.query.frame import frame_of
from fedlab.skills import registry
from fedlab.skills.reader import SentenceReader

DOCS = Path(__file__).resolve().parent.parent / "docs" / "skills"
SKILLS = [*registry.OPENING, *registry.ANSWERING, *registry.BESIDE_READER, SentenceReader()]


def test_every_skill_has_the_interface_and_a_docs_page():
    names = [s.name for s in SKILLS]
    assert len(set(names)) == len(names)
    for skill in SKILLS:
        assert isinstance(skill.needs, str) and callable(skill.applies) and callable(skill.answer)
        assert (DOCS / f"{skill.name}.md").is_file(), f"docs/skills/{skill.name}.md"
    assert (DOCS / f"{registry.CHANGES}.md").is_file()
    assert set(registry.LAYOUT) == set(registry.CREDIT) == {s.name for s in (*registry.OPENING, *registry.BESIDE_READER)}


def test_a_composing_skill_is_credited_before_the_records_that_open_its_answer():
    note = ("[Source {n}] Minutes of the Federal Open Market Committee, {date}\nThe Board of Governors voted "
            "unanimously to set the interest rate paid on required and excess reserve balances at {value} percent.")
    notes = [note.format(n=1, date="2019-07-31", value="2.10"), note.format(n=2, date="2019-09-18", value="1.80")]
    vote = ("[Source 3] FOMC statement, 2019-09-18, Vote record\nVoting for the monetary policy action were Jerome H. "
            "Powell, Chair; and John C. Williams, Vice Chair. Voting against the action were Esther L. George and "
            "Eric S. Rosengren, who preferred to maintain the target range at this meeting.")
    question = "How did the interest rate on reserve balances change from July to September 2019, and who dissented?"
    out = registry.answer(frame_of(question), [*notes, vote], SentenceReader())
    assert out["skill"] == "administered_path" and out["skills"] == ["administered_path", "votes"]
    assert out["answer"].startswith("September 2019: 2 for, 2 against")  # the records open, the composed rest follows
    assert "lowered to 1.80 percent in September 2019 [Source 2]" in out["answer"]


def test_a_skill_switched_off_leaves_its_question_to_the_reader_and_an_unknown_name_is_one_line():
    import pytest

    from fedlab.errors import FedlabError
    from fedlab.lm.extractive import ExtractiveBackend

    note = ("[Source {n}] Minutes of the Federal Open Market Committee, {date}\nThe Board of Governors voted "
            "unanimously to set the interest rate paid on required and excess reserve balances at {value} percent.")
    passages = [note.format(n=1, date="2019-07-31", value="2.10"), note.format(n=2, date="2019-09-18", value="1.80")]
    question = "How did the interest rate on reserve balances change from July to September 2019?"
    on = registry.answer(frame_of(question), passages, SentenceReader())
    off = registry.answer(frame_of(question), passages, SentenceReader(), frozenset({"administered_path"}))
    assert on["skill"] == "administered_path"
    assert "administered_path" not in off["skills"] and off["skill"] == "reader" and off["answer"] != on["answer"]
    assert set(registry.NAMES) >= {s.name for s in (*registry.OPENING, *registry.ANSWERING, *registry.BESIDE_READER)}
    with pytest.raises(FedlabError, match="lm.skills_off names 'no_such_skill', no skill: use some of"):
        ExtractiveBackend(skills_off=["no_such_skill"])
