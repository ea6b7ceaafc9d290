"""FOMC facts as typed records, each with the span it was read from: the meeting timeline
(fedlab.facts.records, read from the documents' own language by fedlab.facts.timeline) and what
each policy statement changed (fedlab.facts.changes).
"""
