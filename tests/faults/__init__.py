"""Fault tests and their reusable faults: a model server that accepts and never answers, and
a disposable Neo4j of the tests' own that a test may stop and start again."""
