"""FOMC facts as typed records, each with the span it was read from: the meeting timeline
(fedlab.facts.records, read from the documents' own language by fedlab.facts.timeline), what each
policy statement changed (fedlab.facts.changes), a meeting's vote and a balance-sheet action as
stated (fedlab.facts.votes, fedlab.facts.balance_sheet), and the passage that states a record to
the answer step (fedlab.facts.passage).
"""
