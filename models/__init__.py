"""Model clients, whatever the role: the OpenAI-compatible chat client (retries, cache,
reply validation and one repair, usage into the ledger) and the packaged sentence encoders
(all-MiniLM-L6-v2 on numpy; its int8 build on ONNX Runtime, for claims) with the on-disk
cache; the claim-pair classifier, a learned head over the claim vectors, with its trainer
in `models/claim_pair/`. What each role does with them lives
in the pipelines' `roles/` folders.

May import: `crase` (core) and `crase.prompts`.
"""
