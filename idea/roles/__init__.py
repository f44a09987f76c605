"""The idea workflow's model roles (structuring, recall, assessment, neighbour grades,
expert ranking, report): what each must provide (protocols.py), the prompt calls and their
payloads (model_calls.py), the model adapters (model.py), the offline adapters
(offline_*.py), and which one serves each role for given settings (from_settings.py).
"""
