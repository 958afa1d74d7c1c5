"""Judgments a team makes itself: pools to judge, labels, agreement, versioned qrels and
judge-corrected estimates (docs/judgments.md walks through the loop).

- :mod:`.pool`: the (query, document) pairs to judge, from runs' top k (TREC pooling);
- :mod:`.labels`: one person's label for one pair, read and checked;
- :mod:`.agreement`: Cohen's and Fleiss' kappa between raters, with intervals;
- :mod:`.versions`: an immutable, content-digested snapshot of the labels (a qrels version);
- :mod:`.judge`: a model judge (the packaged MiniLM, by cosine) calibrated on hand labels;
- :mod:`.estimate`: nDCG@10 by prediction-powered inference beside hand-only and judge-only.
"""
