"""HTTP controllers: thin handlers over the services in `crase.api` and the pipelines."""
