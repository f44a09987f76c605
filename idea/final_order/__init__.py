"""The idea workflow's learned final order, its learned model, in one home: the model over
a shortlist's signals and its file (model.py), its trainer over the workflow's own runs
(training.py) and the shipped model (shipped/hepth-pre2003.txt). It lives in idea/ because
its trainer runs the idea workflow; its LambdaRank learner, shared with the search's
order, stays below both in models/lambdarank.py.
"""
