"""The papers' research extensions on the same graph, one module each: the evolution map of a
topic, citation-gap analysis of a draft, the benchmark landscape of a topic, the code
extractor, human validation of the evidence graph, and entailment training data; and what
the literature runs share: the run record.

What it may import: its row of the README's layout table, the one statement of the
rule (tests/foundation/test_layout.py holds the code to it).
"""
