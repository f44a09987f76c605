"""The search's model roles (planner, claim extractor, entailment scorer): what each must
provide (protocols.py), the adapters served by a model endpoint (model.py; vllm_worker.py
for in-process batches on a GPU host), the offline adapters (offline_planner.py,
offline_claims.py, and the two entailment scorers, cosine_entailment.py and
classifier_entailment.py), and which one serves each role for given settings
(from_settings.py).
"""
