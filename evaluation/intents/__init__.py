"""The deletion-request detector's corpus, training and report.

- ``slots``, ``fill``, ``positives``, ``negatives``: the template families and what fills them;
- ``corpus``: the seeded corpus, split into train and held-out families;
- ``train``: embeddings plus rule signals, logistic regression, calibration and thresholds (``intent_train``);
- ``report``: the saved detector on the held-out families, the persona requests and a hand-written set.
"""
