"""One template per model task (`*.md`, versioned) and the pydantic models their JSON
replies must satisfy, with the checks that depend on the call.

May import: `crase` (core) and `crase.scoring` (claim types).
"""
