"""When the policy statements said something (fedlab.retrieval.mentions): synthetic statements for
the run rules, the real corpus for a run read in the statements, the extractive reader's lines
and the agent handing the run to its answer step with grounded citations."""
from __future__ import annotations

import pytest

from fedlab.facts.timeline import build_timeline
from fedlab.lm.extractive import synthesize_answer
from fedlab.facts.changes import policy_statements
from fedlab.retrieval.mentions import StatementReader, clauses, quoted, said_in, said_place, said_section
from statements import ask_agent, statement

GOALS = "The Committee seeks to achieve maximum employment and inflation at the rate of 2 percent over the longer run."
HOLD = "The Committee decided to maintain the target range for the federal funds rate at 5-1/4 to 5-1/2 percent."
SOUND = "The U.S. banking system is sound and resilient."
SOUND_AGAIN = "Recent developments indicate that the U.S. banking system is sound and resilient."
WATCH = "The Committee will monitor conditions in the banking system and remains attentive to risks."
PATIENT = "The Committee will be patient as it determines future adjustments to the target range."


def text(statements, said) -> str:
    return {d.doc_id: d for d in statements}[said.doc_id].text[said.start:said.end]


@pytest.mark.parametrize("question, expected", [
    ("When did the statement first say X?", ["When did the statement first say X?"]),
    ("When did X first appear, and when did Y first appear?", ["When did X first appear", "when did Y first appear?"]),
    ("Which meetings said X; which said Y?", ["Which meetings said X", "which said Y?"]),
    # a clause that refers back asks about the same thing
    ("When was X first set, and when was it lowered?", ["When was X first set, and when was it lowered?"]),
])
def test_clauses(question, expected):
    assert clauses(question) == expected


def test_a_run_is_every_statement_holding_the_best_sentences_terms():
    docs = [statement("2023-02-01", GOALS, HOLD), statement("2023-03-22", GOALS, SOUND, HOLD),
            statement("2023-05-03", GOALS, SOUND_AGAIN, HOLD), statement("2023-06-14", GOALS, HOLD),
            statement("2023-07-26", GOALS, SOUND, HOLD), statement("2023-09-20", GOALS, WATCH, HOLD)]
    [run] = StatementReader(docs).runs("During which meetings did the statement say the banking system was sound "
                                      "and resilient?", None, None)
    assert [s.meeting_date for s in run.said] == ["2023-03-22", "2023-05-03", "2023-07-26"]
    assert run.statements == 4  # March to July: June did not say it
    assert [text(docs, s) for s in (run.first, run.last)] == [SOUND, SOUND]
    assert not run.opens_range  # February, the first statement searched, did not say it
    # September words it otherwise: no sentence of it holds most of "sound and resilient", and the
    # sentence it put in that place (their edit) is its new wording
    assert run.after.meeting_date == "2023-09-20" and run.reworded and text(docs, run.after) == WATCH
    # a statement that dropped it and put nothing in its place is cited by its opening sentence
    docs[-1] = statement("2023-09-20", GOALS, HOLD)
    [run] = StatementReader(docs).runs("During which meetings did the statement say the banking system was sound "
                                      "and resilient?", None, None)
    assert run.after.meeting_date == "2023-09-20" and not run.reworded and text(docs, run.after) == GOALS


def test_the_statement_after_a_run_gives_its_new_wording_when_it_holds_most_of_what_was_said():
    act = "The Committee will act as appropriate as it determines future adjustments to the target range."
    docs = [statement("2019-01-30", GOALS, PATIENT), statement("2019-03-20", GOALS, PATIENT), statement("2019-05-01", GOALS, act)]
    question = "When did the statement say the Committee would be patient about future adjustments to the target range?"
    [run] = StatementReader(docs).runs(question, None, "2019-04-01")
    assert [s.meeting_date for s in run.said] == ["2019-01-30", "2019-03-20"]
    assert run.opens_range  # January is the first statement searched: it may have said it before
    assert run.after is None  # May is outside the range
    [run] = StatementReader(docs).runs(question, None, None)
    assert run.last.meeting_date == "2019-03-20"
    assert run.after.meeting_date == "2019-05-01" and run.reworded and text(docs, run.after) == act


def test_wording_dropped_and_taken_up_again_is_two_runs_the_clause_choosing_between_them():
    """More than RUN_GAP statements without it end a run; of the runs, the one whose sentences hold
    more of the clause's other words answers it, and each does when none holds more."""
    virus = "The pandemic is causing tremendous hardship across the country."
    war = "The war abroad is causing tremendous hardship."
    docs = [statement("2020-04-29", GOALS, virus), statement("2020-06-10", GOALS, virus),
            statement("2020-07-29", GOALS, HOLD), statement("2020-09-16", GOALS, HOLD),
            statement("2020-11-05", GOALS, war), statement("2020-12-16", GOALS, war),
            statement("2021-01-27", GOALS, HOLD)]
    reader = StatementReader(docs)
    [run] = reader.runs('When did the statement say the pandemic was causing "tremendous hardship"?', None, None)
    assert [s.meeting_date for s in run.said] == ["2020-04-29", "2020-06-10"] and run.statements == 2
    assert run.after.meeting_date == "2020-07-29"
    [run] = reader.runs('When did the statement say the war was causing "tremendous hardship"?', None, None)
    assert [s.meeting_date for s in run.said] == ["2020-11-05", "2020-12-16"]
    both = reader.runs('When did the statement say "tremendous hardship"?', None, None)
    assert [(r.first.meeting_date, r.last.meeting_date) for r in both] == [("2020-04-29", "2020-06-10"),
                                                                          ("2020-11-05", "2020-12-16")]


def test_quoted_wording_is_what_was_said_and_verbatim_when_a_statement_holds_it_word_for_word():
    """A quotation is the wording asked about: the clause's other words ("listed among the things
    it weighed") need not be in the statements; the run is verbatim when its first sentence holds
    the quotation word for word, not when it holds its words in another order."""
    docs = [statement("2019-01-30", GOALS, PATIENT), statement("2019-03-20", GOALS, PATIENT), statement("2019-05-01", GOALS, HOLD)]
    reader = StatementReader(docs)
    question = 'Which was the last statement that listed "be patient" among the things it weighed?'
    assert reader.runs(question.replace('"', ""), None, None) == []  # unquoted, "listed" and "weighed" weigh most
    [run] = reader.runs(question, None, None)
    assert run.last.meeting_date == "2019-03-20" and run.verbatim
    [run] = reader.runs('Which was the last statement to say "patient Committee"?', None, None)
    assert run.last.meeting_date == "2019-03-20" and not run.verbatim  # its words, not in that order
    [run] = reader.runs("When did the statements last say the Committee would be patient?", None, None)
    assert not run.verbatim  # nothing quoted
    # several quotations: each word for word
    [run] = reader.runs('Which was the last statement to say "be patient" and "target range"?', None, None)
    assert run.verbatim
    [run] = reader.runs('Which was the last statement to say "be patient" and "range target"?', None, None)
    assert not run.verbatim


def test_wording_in_single_quotes_is_a_quotation_and_an_apostrophe_is_not():
    """'Single quotes' quote wording as double ones do; the apostrophe of "participants' views" or
    of "the Committee's" opens and closes nothing."""
    assert quoted("When did the statement first call inflation 'transitory', and when was it dropped?") == \
        ["transitory"]
    assert quoted("Did the Committee’s statement say ‘be patient’ in March?") == ["be patient"]
    assert quoted("What were participants' views on the Committee's stance?") == []
    docs = [statement("2019-01-30", GOALS, PATIENT), statement("2019-03-20", GOALS, PATIENT), statement("2019-05-01", GOALS, HOLD)]
    [run] = StatementReader(docs).runs("Which was the last statement that listed 'be patient' among the things it weighed?",
                                       None, None)
    assert run.last.meeting_date == "2019-03-20" and run.verbatim


def test_no_run_when_the_statements_do_not_hold_what_was_asked_or_hold_one_statement():
    docs = [statement("2023-03-22", GOALS, SOUND), statement("2023-05-03", GOALS, SOUND)]
    reader = StatementReader(docs)
    assert reader.runs("When was the ON RRP offering rate first set at 5.3 percent?", None, None) == []
    assert reader.runs("When did the statement say the banking system was sound?", "2023-05-01", "2023-05-31") == []
    assert len(reader.runs("When did the statement say the banking system was sound?", None, None)) == 1
    # words for the text's parts are how a question points at what was said, not what was said
    [run] = reader.runs("When did the line on the banking system being sound last appear in a paragraph?", None, None)
    assert run.last.meeting_date == "2023-05-03"


def test_said_sections_read_back():
    docs = [statement("2020-01-29", GOALS), statement("2020-03-03", GOALS, SOUND), statement("2020-03-15", SOUND)]
    [run] = StatementReader(docs).runs("When did the statement say the banking system was sound?", None, None)
    place = said_in(said_section(run, 2, "first"))
    assert (place.saying, place.statements, place.first, place.last, place.run, place.role) == \
        (2, 2, "2020-03-03", "2020-03-15", 2, "first")
    assert not place.opens_range
    for role in ("first", "last", "after", "dropped"):  # the record the agent hands on is the one its section names
        assert said_place(run, 2, role) == said_in(said_section(run, 2, role))
    for other in (None, "", "Committee Policy Action", "new since the statement of 2023-12-13",
                  "said in 2 of 2 statements, 2020-03-03 to 2020-03-15, run 1: middle"):
        assert said_in(other) is None


def test_the_reader_answers_the_when_first_each_line_cited():
    docs = [statement("2023-02-01", GOALS, HOLD), statement("2023-03-22", GOALS, SOUND, HOLD),
            statement("2023-05-03", GOALS, SOUND, HOLD), statement("2023-06-14", GOALS, WATCH, HOLD)]
    [run] = StatementReader(docs).runs("When did the statement say the banking system was sound and resilient?",
                                       None, None)
    passages = [f"[Source 1] FOMC statement, 2023-03-22\n{HOLD}",
                f"[Source 2] FOMC statement, 2023-03-22, {said_section(run, 1, 'first')}\n{SOUND}",
                f"[Source 3] FOMC statement, 2023-05-03, {said_section(run, 1, 'last')}\n{SOUND}",
                f"[Source 4] FOMC statement, 2023-06-14, {said_section(run, 1, 'dropped')}\n{GOALS}"]
    answer = synthesize_answer("When did the statement say the banking system was sound and resilient?", passages)["answer"]
    assert answer.startswith("The policy statements said this from March 2023 to May 2023, in both statements "
                             "[Source 2, Source 3].")
    assert f"March 2023 and May 2023: {SOUND} [Source 2, Source 3]" in answer
    assert "The June 2023 statement no longer did [Source 4]." in answer
    without = synthesize_answer("When did the statement say the banking system was sound and resilient?",
                                [passages[0]])["answer"]
    assert "said this" not in without
    # the places the agent hands on as records (fedlab.facts.passage) answer as the sections do
    from fedlab.facts.passage import FactPassage

    placed = [passages[0]] + [FactPassage(p, said_place(run, 1, role))
                              for p, role in zip(passages[1:], ("first", "last", "dropped"))]
    assert synthesize_answer("When did the statement say the banking system was sound and resilient?",
                             placed)["answer"] == answer


@pytest.fixture(scope="module")
def statements(documents):
    return policy_statements(build_timeline(documents), {d.doc_id: d for d in documents})


def test_sound_and_resilient_in_the_real_statements(statements):
    """Read in the statements: the sentence came with the March 2023 statement after the bank
    failures, stayed through December 2023 and was gone in January 2024."""
    [run] = StatementReader(statements).runs("Which meetings' statements said the U.S. banking system was sound and "
                                            "resilient?", None, None)
    assert (run.first.meeting_date, run.last.meeting_date) == ("2023-03-22", "2023-12-13")
    assert len(run.said) == run.statements  # every statement in between
    assert run.after.meeting_date == "2024-01-31"
    assert "sound and resilient" in text(statements, run.first)


def test_agent_answers_when_a_statement_said_something_from_the_run(corpus_dir):
    def ask(*sets):
        return ask_agent(corpus_dir, "When did the statement first mention Russia's invasion of Ukraine, and when "
                                     "did it stop?", *sets)

    answer = ask()
    assert answer.answer.startswith("The policy statements said this from March 2022 to ")
    assert all(c.chunk_id in answer.retrieved_chunk_ids for c in answer.citations)
    assert "statement-2022-03-16" in {c.doc_id for c in answer.citations}
    assert "said this" not in ask("agent.statement_runs=false").answer


def test_a_run_found_is_evidence_the_answerability_model_reads(corpus_dir):
    """The run is read from every statement in range, not retrieved: the features record whether one
    was found (fedlab.agent.evidence.RUN_FEATURE), as the model is fitted in (unmodelled, with the
    corpus's vocabulary)."""
    from fedlab.agent.answering import compose_config
    from fedlab.agent.build import build_agent
    from fedlab.agent.evidence import RUN_FEATURE, Vocabulary
    from fedlab.agent.answerability_fit import ANSWERABLE_FEATURES
    from fedlab.agent.searcher import open_search

    assert RUN_FEATURE in ANSWERABLE_FEATURES
    cfg = compose_config("evaluate", ["retriever=bm25", "retriever.events=true", "agent.calibration=null",
                                      f"paths.data_dir={corpus_dir.parent.parent}"])
    search = open_search(cfg, "direct")
    try:
        agent = build_agent(cfg, search=search)
        agent.vocabulary = Vocabulary.from_chunks(search.searcher.chunks)
        said = agent("When did the statement first mention Russia's invasion of Ukraine, and when did it stop?")
        assert said.signals[RUN_FEATURE] == 1.0
        assert agent("What did the Committee decide about the target range in March 2022?").signals[RUN_FEATURE] == 0.0
    finally:
        search.close()


def test_a_count_of_meetings_is_read_from_the_run_and_a_clause_referring_back_adds_no_terms():
    """"For how many meetings did the statement say …" is answered by the run, like "when"; words of
    counting ("many") and the words of a part referring back ("…, and when was that language
    dropped?", none of them statement words) are not what was said."""
    docs = [statement("2023-02-01", GOALS, HOLD), statement("2023-03-22", GOALS, SOUND, HOLD),
            statement("2023-05-03", GOALS, SOUND, HOLD), statement("2023-06-14", GOALS, HOLD)]
    reader = StatementReader(docs)
    [run] = reader.runs("For how many meetings did the statement say the banking system was sound and resilient?",
                        None, None)
    assert [s.meeting_date for s in run.said] == ["2023-03-22", "2023-05-03"]
    question = ("When did the statement say the banking system was sound and resilient, and when was that "
                "reassuring, soothing, comforting language abandoned or forgotten?")
    [run] = reader.runs(question, None, None)
    assert run.last.meeting_date == "2023-05-03" and run.after.meeting_date == "2023-06-14"
    assert reader.runs(question.replace(", and when was that", " with"), None, None) == []  # its words, scored
