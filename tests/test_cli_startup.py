"""The command line starts at once (issue 23): importing it, ``--version`` and
``--help`` load none of the heavy modules; each command imports what it needs when
it runs. Checked in a new interpreter, by what ends up in ``sys.modules``."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys

import pytest

#: Modules the start-up must not import (each costs tens to hundreds of ms).
HEAVY = ("numpy", "onnxruntime", "httpx", "fastapi", "codecite.explain", "codecite.api")

PROBE = """
import json, sys
args, code = sys.argv[1:], 0
if args:
    sys.argv = ["codecite", *args]
    from codecite.cli import main
    try:
        main()
    except SystemExit as exc:
        code = exc.code
else:
    import codecite.cli
sys.stdout.flush()
sys.stderr.write(json.dumps({"code": code, "modules": sorted(sys.modules)}) + "\\n")
"""


def loaded_modules(*args: str) -> tuple[object, set[str]]:
    """Exit code and ``sys.modules`` of a new interpreter after ``codecite ARGS``
    (just ``import codecite.cli`` without arguments)."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=60
    )
    report = json.loads(done.stderr.strip().splitlines()[-1])
    return report["code"], set(report["modules"])


@pytest.mark.parametrize(
    "args", [(), ("--version",), ("--help",), ("search", "--help"), ("index", "--help")]
)
def test_start_up_imports_no_heavy_module(args: tuple[str, ...]) -> None:
    code, modules = loaded_modules(*args)
    assert code in (0, None), code
    heavy = sorted(m for m in modules for h in HEAVY if m == h or m.startswith(h + "."))
    assert heavy == [], f"codecite {' '.join(args) or '(import)'} imported {heavy}"
    assert "codecite.cli.query" in modules  # every command is registered


def test_a_command_imports_the_library_when_it_runs(tmp_path) -> None:
    code, modules = loaded_modules("status", str(tmp_path))
    assert code == 1  # no index there: a user error, after the library was loaded
    assert "codecite.api" in modules


def test_the_watch_command_shows_the_library_defaults() -> None:
    from codecite.cli.freshness import watch_command
    from codecite.index.watch import WatchOptions

    params = inspect.signature(watch_command).parameters
    assert params["settle"].default == WatchOptions.settle
    assert params["embed_delay"].default == WatchOptions.embed_delay
