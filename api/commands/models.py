"""`crase models serve|stop|status|env|logs`: the local OpenAI-compatible model server
(llama.cpp, the local-llm extra) and the settings that point the model roles at it."""

import argparse

from crase.models.local_server import LocalModelServer, role_environment
from crase.settings import Settings

ORDER = 15  # place in `crase --help` (api/cli.py): after `db`


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    models = subparsers.add_parser(
        "models", help="run a local model server for the model roles",
        description="A llama.cpp server on loopback with the packaged SmolLM2-135M-Instruct "
                    "(a plumbing check, not a quality level); needs `make local-llm`.")
    actions = models.add_subparsers(dest="action", required=True, metavar="ACTION")
    actions.add_parser(
        "serve", help="start the server (once), wait for it, print the role settings"
    ).set_defaults(handler=serve)
    actions.add_parser("stop", help="stop the server this project started").set_defaults(
        handler=stop)
    actions.add_parser("status", help="is it running, where, and where is its log"
                       ).set_defaults(handler=status)
    actions.add_parser("env", help="print the settings that point every role at it"
                       ).set_defaults(handler=print_env)
    logs = actions.add_parser("logs", help="print the end of the server log")
    logs.add_argument("-n", "--lines", type=int, default=40, help="lines to print (default 40)")
    logs.set_defaults(handler=show_logs)


def serve(args: argparse.Namespace, settings: Settings) -> int:
    server = LocalModelServer(settings)
    was_running = server.status().running
    state = server.start()
    verb = "already running" if was_running else "started"
    print(f"local model server {verb} (pid {state.pid})")
    print(f"  URL:   {state.base_url}  model {state.model}")
    print(f"  Log:   {state.log_file}")
    print("  Point every model role at it (export these, or put them in .env):")
    print_env(args, settings)
    return 0


def stop(args: argparse.Namespace, settings: Settings) -> int:
    stopped = LocalModelServer(settings).stop()
    print("local model server stopped" if stopped else
          "no local model server started by this project is running")
    return 0


def status(args: argparse.Namespace, settings: Settings) -> int:
    state = LocalModelServer(settings).status()
    running = f"running (pid {state.pid})" if state.running else "not running"
    print(f"local model server {running}\n  URL: {state.base_url}  model {state.model}\n"
          f"  Log: {state.log_file}")
    return 0 if state.running else 1


def print_env(args: argparse.Namespace, settings: Settings) -> int:
    for name, value in role_environment(settings.local_model).items():
        print(f"{name}={value}")
    return 0


def show_logs(args: argparse.Namespace, settings: Settings) -> int:
    path = LocalModelServer(settings).log_file
    if path.exists():
        print("\n".join(path.read_text(errors="replace").splitlines()[-args.lines:]))
    return 0
