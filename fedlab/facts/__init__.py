"""FOMC facts as typed records: the meeting timeline (fedlab.facts.records), read from the
documents' own language (fedlab.facts.timeline), each value with the span it was read from.
"""
