"""The ``kg-agent`` executable: runs the CLI in a child process and watches it.

Why: Kùzu 0.11.3 dies with a segmentation fault, no message, when it reads a
damaged database file (bytes overwritten in the middle, measured in
``tests/e2e/test_damaged_db.py``). A process cannot report its own segfault, so
this small parent (standard library only: it starts in milliseconds) runs the
real command as a child and turns such a death into the one-line error every
other failure gets, naming the database and how to recover.

The child runs in its own process group, and the parent forwards Ctrl-C
(SIGINT), SIGTERM and SIGHUP to it exactly once; the child is killed with the
parent when the parent dies (``PR_SET_PDEATHSIG``): ``kill -9`` of ``kg-agent``
stops everything.
Exit status: the child's; 1 for a crash; 128 + N when signal N killed it.
``KG_AGENT_SUPERVISED=1`` (set for the child) runs the CLI in-process.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

_CRASHES = {
    signal.SIGSEGV: "SIGSEGV",
    signal.SIGBUS: "SIGBUS",
    signal.SIGILL: "SIGILL",
    signal.SIGFPE: "SIGFPE",
    signal.SIGABRT: "SIGABRT",
}
_NO_DATABASE = {"sample", "--help", "-h", "--version"}
#: Where this process imported ``kg_agent`` from: the child imports the same copy. With
#: ``python -m kg_agent.cli`` the child's first import path was its working directory,
#: so ``kg-agent`` run from a folder holding another copy of the package (a checkout of
#: another version) ran the CLI of that copy under the supervisor of this one.
_PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_CHILD = (
    "import sys; sys.path[0] = sys.argv.pop(1); "
    "from kg_agent.cli import main; main(prog_name='kg-agent')"
)


def _database(argv: list[str]) -> str:
    for i, arg in enumerate(argv):
        if arg == "--db" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--db="):
            return arg[5:]
    return os.environ.get("KG_AGENT_DB", "the database")


def _in_child() -> None:
    """In the child before exec: its own process group (the terminal's Ctrl-C reaches
    the parent only, which forwards it once), the default SIGINT and SIGTERM, and on
    Linux a SIGKILL when the parent dies.

    The default signals matter: a command started in the background of a shell script
    (``kg-agent load … &``) inherits SIGINT *ignored*, and Python installs its Ctrl-C
    handler only over the default; the child then ignored the SIGINT the parent
    forwarded, and the load ran on.
    """
    os.setpgid(0, 0)
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def main() -> None:
    argv = sys.argv[1:]
    if os.environ.get("KG_AGENT_SUPERVISED") or not argv or argv[0] in _NO_DATABASE:
        from kg_agent.cli import main as cli

        cli()
        return
    env = dict(os.environ, KG_AGENT_SUPERVISED="1")
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, _PACKAGE_ROOT, *argv],
        env=env,
        preexec_fn=_in_child,
    )

    def forward(signum: int, _frame: object) -> None:
        child.send_signal(signum)

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, forward)
    code = child.wait()
    if code >= 0:
        sys.exit(code)
    if -code in _CRASHES:
        db = _database(argv)
        print(
            f"Error: kg-agent crashed ({_CRASHES[signal.Signals(-code)]}) inside Kùzu while "
            f"using {db}: the database file is probably damaged. Run 'kg-agent check --db "
            f"{db}' to verify it; to recover, restore a copy or load the sources again into "
            "a new --db (docs/operations.md)",
            file=sys.stderr,
        )
        sys.exit(1)
    sys.exit(128 - code)


if __name__ == "__main__":
    main()
