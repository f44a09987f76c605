"""`crase serve [--host] [--port]`: the HTTP API under uvicorn.

Binds to 127.0.0.1 by default. Without configured keys (CRASE_API__API_KEYS) it makes one
key into var/api-key on first start, prints where it is, and serves only on loopback; on
any other address it refuses to start without keys.
"""

import argparse

from crase.settings import Settings

ORDER = 40  # place in `crase --help` (api/cli.py)


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    serve = subparsers.add_parser(
        "serve", help="run the HTTP API (OpenAPI docs at /schema)",
        description="Serve the HTTP API. Every route but /health needs the X-API-Key header.")
    serve.add_argument("--host", help="address to bind (default 127.0.0.1, CRASE_API__HOST)")
    serve.add_argument("--port", type=int, help="port (default 8000, CRASE_API__PORT)")
    serve.add_argument("--log-level", default="info",
                       choices=["critical", "error", "warning", "info", "debug"],
                       help="uvicorn log level (default info)")
    serve.set_defaults(handler=serve_api)


def serve_api(args: argparse.Namespace, settings: Settings) -> int:
    # Imported here: the app pulls in both pipelines, which every other command would
    # otherwise pay for at start-up.
    import uvicorn

    from crase.api.app import create_app
    from crase.api.auth import API_KEY_HEADER, is_loopback, resolve_api_keys

    host = args.host or settings.api.host
    port = args.port or settings.api.port
    keys, key_file = resolve_api_keys(settings, host)
    settings = settings.model_copy(
        update={"api": settings.api.model_copy(update={"api_keys": keys})})
    app = create_app(settings)
    print(f"Crase HTTP API on http://{host}:{port}  (docs: http://{host}:{port}/schema)")
    print(f"  Web pages: http://{host}:{port}/ui/ (log in with the API key)")
    if key_file is not None:
        print(f"  API key: in {key_file} (send it as the {API_KEY_HEADER} header)")
    else:
        print(f"  API keys: {len(keys)} configured (send one as the {API_KEY_HEADER} header)")
    if not is_loopback(host):
        print("  Note: this is plain HTTP on a non-loopback address; put TLS in front of it.")
    uvicorn.run(app, host=host, port=port, log_level=args.log_level)
    return 0
