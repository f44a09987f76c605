"""The `crase` subcommands, one module per group; each adds its parsers and handlers.
"""
