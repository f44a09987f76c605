"""HTTP controllers: thin handlers over the services in `crase.api` and the pipelines.

Each module lists its handlers in `PROTECTED` (behind the API-key guard) and/or `PUBLIC`;
the app mounts every module of this package, so a new route file needs no list edited.
"""
