"""One template per model task (`*.md`, versioned) and the pydantic models their JSON
replies must satisfy, with the checks that depend on the call.

What it may import: its row of the README's layout table, the one statement of the
rule (tests/foundation/test_layout.py holds the code to it).
"""
