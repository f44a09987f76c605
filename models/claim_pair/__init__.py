"""The claim-pair classifier, the entailment scorer's learned model, in one home: the head
and its file format (classifier.py), its trainer (training.py), the figures it and the
entailment benchmark measure by (metrics.py), the shipped model
(shipped/minilm-int8-scinli.json) and how it was trained (recipe.py). It lives in models/
because its trainer needs only the claim encoder; the search's scorer that reads it is
search/roles/classifier_entailment.py.
"""
