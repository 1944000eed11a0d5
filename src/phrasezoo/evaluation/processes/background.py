"""A workflow step in a process of its own: ``python -m <module> <request as JSON>``, its output in a log file.

The main job measures the baselines beside training (:mod:`.baselines`) and evaluates the exported model in two
processes (:mod:`.parallel`); both start a module of this package with a JSON request, keep its output out of the
terminal and, when it fails, show the end of its log.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any


class ModuleProcess:
    """``python -m module request`` started now, stdout and stderr into ``log``; :meth:`wait` for its exit code."""

    def __init__(self, module: str, request: dict[str, Any], log: str | Path, env: dict[str, str] | None = None):
        self.log = Path(log)
        with open(self.log, "w") as out:
            self.process = subprocess.Popen([sys.executable, "-m", module, json.dumps(request)], stdout=out,
                                            stderr=subprocess.STDOUT, env=env)  # fmt: skip

    def wait(self) -> int:
        return self.process.wait()

    def terminate(self) -> None:
        self.process.terminate()

    def log_tail(self, lines: int = 30) -> str:
        """The last ``lines`` lines of the log (what a failure message shows)."""
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])


def read_request(argv: list[str] | None = None) -> dict[str, Any]:
    """The JSON request of a module started by :class:`ModuleProcess` (its first command-line argument)."""
    return json.loads((argv or sys.argv[1:])[0])
