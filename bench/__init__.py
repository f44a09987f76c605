"""Benchmarks and evaluation: what `crase bench` runs (the retrieval benchmark with its
baselines and ablations, the entailment scorers on labelled pairs), the commands that
measure the figures the docs show (latency, load, ingest and embedding speed, the
calibrations behind shipped defaults, the idea evaluation), and the stand-ins of external
APIs and generated corpora that they and the tests use. An experiment whose option was not
adopted leaves this folder once it is over; the docs keep its figures and the commit that
held its code.

What it may import: its row of the README's layout table, the one statement of the
rule (tests/foundation/test_layout.py holds the code to it).
"""
