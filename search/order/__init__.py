"""The learned order, the search's learned model, in one home: the candidates' features
(features.py), the model per query form and its folder format (model.py), its trainer over
the search's own stages (training.py), the linear models' file format (linear_ranking.py)
and the shipped model folder (shipped/hepth-pre2003/). It lives in search/ because its
features and its trainer run the search's stages; its LambdaRank learner, which the idea
workflow's final order shares, stays below both in models/lambdarank.py.
"""
