"""Model clients, whatever the role: the OpenAI-compatible chat client (retries, cache,
reply validation and one repair, usage into the ledger) and the packaged sentence encoders
(all-MiniLM-L6-v2 on numpy and its int8 build on ONNX Runtime, for papers and claims)
with the on-disk cache; the LambdaRank learner the learned orders share; the claim-pair
classifier, a learned head over the claim vectors, with its trainer in
`models/claim_pair/`. What each role does with them lives in the pipelines' `roles/`
folders.

What it may import: its row of the README's layout table, the one statement of the
rule (tests/foundation/test_layout.py holds the code to it).
"""
