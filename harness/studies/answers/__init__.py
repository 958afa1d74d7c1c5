"""Aggregation answers scored on the answer, not on a rank.

"How many meetings discussed X" has an integer for an answer; no nDCG can say whether it was
right.  These queries are answered by exact, model-free mechanisms over the transcript store
(:mod:`ingestion.transcripts`) and scored by their own engine:

* :mod:`.answer`: what an answerer returns, and the bound on the rows a query may read;
* :mod:`.answerers`: the registry (``none``, ``reference``, ``product``, ``opensearch``);
* :mod:`.reference` / :mod:`.product`: the two parsers (they share no pattern or code);
  :mod:`.opensearch`: the reference's frames answered from an OpenSearch index;
* :mod:`.grading`: EM / partial / answered under a written policy, means over the gold set;
* :mod:`.document`: answers.json and answers.md;
* :mod:`.pipeline`: one run, from loaded corpora to the document.

The command is ``python -m harness answer`` (:mod:`harness.cli.answer`).
"""
