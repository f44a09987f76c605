"""Benchmarks and their reports: retrieval quality against baselines and ablations,
latency, load, ingest speed, entailment calibration, the idea evaluation.

May import: every folder except `crase.api`.
"""
