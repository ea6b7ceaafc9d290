"""The FOMC corpus: calendar discovery, fetching, cleaning, the stored snapshot (``snapshot.Corpus``,
``snapshot.load_corpus``) and the meeting timeline read from it."""
