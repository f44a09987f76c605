"""Model clients, whatever the role: the OpenAI-compatible chat client (retries, cache,
reply validation and one repair, usage into the ledger) and the packaged sentence encoder
(all-MiniLM-L6-v2 on numpy) with its on-disk cache. What each role does with them lives
in the pipelines' `roles/` folders.

May import: `crase` (core) and `crase.prompts`.
"""
