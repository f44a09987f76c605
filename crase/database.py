"""The self-managed Neo4j server: config, password, start, stop, status, logs, admin tool.

The jars come from `database/pom.xml` (Maven Central) into `var/neo4j/lib` and
`var/neo4j/plugins`. A server's own state (conf, data, logs, pid) lives under its home,
which is the same folder by default and a temporary one for test servers.
"""

import os
import secrets
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from crase import processes
from crase.errors import JarsMissing, ServerStartError
from crase.neo4j_driver import AuthError, GraphDatabase, ServiceUnavailable
from crase.settings import DatabaseSettings

ENTRY_POINT = "org.neo4j.server.CommunityEntryPoint"
ADMIN_TOOL = "org.neo4j.cli.AdminTool"

# The options Neo4j's own launch script adds for Java 17 (netty and the page cache reach
# into java.nio internals); without them the server logs warnings or fails at start.
JVM_OPTIONS = [
    "-XX:+UseG1GC",
    "-XX:-OmitStackTraceInFastThrow",
    "-XX:+UnlockExperimentalVMOptions",
    "-XX:+TrustFinalNonStaticFields",
    "-XX:+DisableExplicitGC",
    "-Djdk.nio.maxCachedBufferSize=1024",
    "-Dio.netty.tryReflectionSetAccessible=true",
    "-Dlog4j2.disable.jmx=true",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "--add-opens=java.base/java.util=ALL-UNNAMED",
]


@dataclass(frozen=True)
class ServerStatus:
    running: bool
    pid: int | None
    bolt_uri: str
    browser_url: str
    log_dir: Path


def generate_password() -> str:
    """A random password that never starts with "-" (neo4j-admin would read it as an
    option): letters and digits only."""
    return secrets.token_hex(16)


class Neo4jServer:
    """One Neo4j process with its home folder; at most one per home."""

    def __init__(self, settings: DatabaseSettings) -> None:
        self.settings = settings
        # Absolute: Neo4j reads relative directories against its home, not our cwd.
        self.home = settings.home.resolve()
        self.jars_dir = settings.jars_dir.resolve()

    # paths -----------------------------------------------------------------
    @property
    def conf_dir(self) -> Path:
        return self.home / "conf"

    @property
    def log_dir(self) -> Path:
        return self.home / "logs"

    @property
    def pid_file(self) -> Path:
        return self.home / "run" / "crase-neo4j.pid"

    @property
    def password_file(self) -> Path:
        return self.home / "password"

    @property
    def console_log(self) -> Path:
        return self.log_dir / "console.log"

    # password ----------------------------------------------------------------
    def password(self) -> str:
        """The configured password, else the generated one kept in the home folder."""
        if self.settings.password:
            return self.settings.password
        if self.password_file.exists():
            return self.password_file.read_text().strip()
        self.home.mkdir(parents=True, exist_ok=True)
        generated = generate_password()
        self.password_file.write_text(generated + "\n")
        self.password_file.chmod(0o600)
        return generated

    # lifecycle -----------------------------------------------------------------
    def status(self) -> ServerStatus:
        pid = self._live_pid()
        return ServerStatus(
            running=pid is not None,
            pid=pid,
            bolt_uri=self.settings.bolt_uri(),
            browser_url=self.settings.browser_url(),
            log_dir=self.log_dir,
        )

    def start(self) -> ServerStatus:
        """Start the server unless this home already runs one, and wait until Bolt answers."""
        if self._live_pid() is not None:
            return self.status()
        self._check_jars()
        self.write_conf()
        if not (self.home / "data" / "databases" / "system").exists():
            self._set_initial_password()
        self.log_dir.mkdir(parents=True, exist_ok=True)
        process = processes.spawn(
            self._java_command(ENTRY_POINT, f"--home-dir={self.home}",
                               f"--config-dir={self.conf_dir}"),
            self.console_log, self.pid_file, env=self._java_env())
        self._wait_for_bolt(process)
        return self.status()

    def stop(self, timeout_s: float = 60.0) -> bool:
        """Stop the server this home started (by its pid). Returns False if none ran."""
        return processes.stop(self.pid_file, ENTRY_POINT, timeout_s)

    def run_admin(self, *args: str) -> subprocess.CompletedProcess[str]:
        """Run `neo4j-admin` (e.g. `database import full ...`) against this home."""
        self._check_jars()
        self.write_conf()
        return subprocess.run(
            self._java_command(ADMIN_TOOL, *args), env=self._java_env(),
            capture_output=True, text=True, check=False,
        )

    # config ----------------------------------------------------------------
    def write_conf(self) -> Path:
        s = self.settings
        for sub in ("conf", "data", "logs", "run", "import"):
            (self.home / sub).mkdir(parents=True, exist_ok=True)
        lines = [
            "# Written by `crase db start`; edit the settings (CRASE_DATABASE__*), not this file.",
            f"server.default_listen_address={s.listen_address}",
            f"server.bolt.listen_address={s.listen_address}:{s.bolt_port}",
            f"server.http.listen_address={s.listen_address}:{s.http_port}",
            "server.https.enabled=false",
            f"server.directories.data={self.home / 'data'}",
            f"server.directories.logs={self.log_dir}",
            f"server.directories.run={self.home / 'run'}",
            f"server.directories.import={self.home / 'import'}",
            f"server.directories.plugins={self.jars_dir / 'plugins'}",
            "dbms.security.auth_enabled=true",
            "dbms.security.procedures.unrestricted=gds.*",
            "dbms.security.procedures.allowlist=gds.*",
            f"server.memory.heap.initial_size={s.heap}",
            f"server.memory.heap.max_size={s.heap}",
            f"server.memory.pagecache.size={s.pagecache}",
            "dbms.usage_report.enabled=false",
            "db.tx_log.rotation.retention_policy=1 files",
            # The backstop for every transaction (Neo4j Browser's too); the application's
            # own reads set shorter timeouts (read_timeout_s and per request).
            f"db.transaction.timeout={s.transaction_timeout_s:g}s",
            # One transaction (an analyst's string bomb) may not take the heap of all.
            f"db.memory.transaction.max={s.transaction_memory}",
        ]
        path = self.conf_dir / "neo4j.conf"
        path.write_text("\n".join(lines) + "\n")
        return path

    # internals ---------------------------------------------------------------
    def _check_jars(self) -> None:
        for sub in ("lib", "plugins"):
            if not any((self.jars_dir / sub).glob("*.jar")):
                raise JarsMissing(f"no jars in {self.jars_dir / sub}: run `make jars`")

    def _java_command(self, main_class: str, *args: str) -> list[str]:
        classpath = f"{self.jars_dir / 'lib'}/*:{self.jars_dir / 'plugins'}/*"
        heap = [f"-Xms{self.settings.heap}", f"-Xmx{self.settings.heap}"]
        if main_class == ADMIN_TOOL:
            heap = []
        return ["java", *JVM_OPTIONS, *heap, "-cp", classpath, main_class, *args]

    def _java_env(self) -> dict[str, str]:
        return {**os.environ, "NEO4J_HOME": str(self.home), "NEO4J_CONF": str(self.conf_dir)}

    def _set_initial_password(self) -> None:
        # "--" ends the options, so a configured password that starts with "-" is a password.
        result = self.run_admin("dbms", "set-initial-password", "--", self.password())
        if result.returncode != 0:
            raise ServerStartError(f"setting the initial password failed: {result.stderr[-2000:]}")

    def _wait_for_bolt(self, process: subprocess.Popen[bytes]) -> None:
        deadline = time.monotonic() + self.settings.start_timeout_s
        auth = (self.settings.user, self.password())
        while time.monotonic() < deadline:
            if process.poll() is not None:
                self.pid_file.unlink(missing_ok=True)
                raise ServerStartError(
                    f"Neo4j exited with code {process.returncode}; see {self.console_log} "
                    f"and {self.log_dir / 'debug.log'}"
                )
            try:
                with GraphDatabase.driver(self.settings.bolt_uri(), auth=auth) as driver:
                    driver.verify_connectivity()
                return
            except ServiceUnavailable:
                time.sleep(0.5)
            except AuthError as err:
                raise ServerStartError(
                    f"Neo4j refused the password from {self.password_file} "
                    "(was the data folder made with another one?)"
                ) from err
        raise ServerStartError(
            f"Bolt did not answer within {self.settings.start_timeout_s:.0f} s; "
            f"see {self.console_log} and {self.log_dir / 'debug.log'}"
        )

    def _live_pid(self) -> int | None:
        return processes.live_pid(self.pid_file, ENTRY_POINT)
