"""Question understanding: what a question asks, read once (fedlab.query.frame.QuestionFrame).

The word lists live in fedlab.query.lexicon; the detectors (subjects, request, answer_types,
speakers, shorthand) read only the question, never the passages.
"""
