"""Projects that must never appear in the training data (issue 24), and the checks
that enforce it.

Kept out: every project of the evaluation sets (``bench/bugs_bench.py``,
``bench/search_bench.py``), the answer benchmark's projects, and the projects kept
for independent checks. The checks are applied to

- a distribution's name (:func:`excluded_name`): the project itself, its plugins and
  stubs (``pytest-cov``, ``types-requests``, ``django-stubs``: they copy or restate its
  API), and a few forks known by name;
- every file path of a distribution or a mirror (:func:`vendored_path`): a folder named
  like an excluded project's import package (``pip/_vendor/requests/``,
  ``foo/vendor/click/``) marks a vendored copy and the file is skipped;
- a git mirror's name (:func:`excluded_repo`).

What was skipped and why is counted in the training manifest.
"""

from __future__ import annotations

import re

#: Distribution names (PyPI spelling, normalised) and why each is kept out.
EXCLUDED: dict[str, str] = {
    # bench/bugs_bench.py (SWE-bench dev)
    "sqlfluff": "bugs_bench", "pvlib": "bugs_bench", "pydicom": "bugs_bench",
    "astroid": "bugs_bench", "pyvista": "bugs_bench", "marshmallow": "bugs_bench",
    # bench/search_bench.py
    "click": "search_bench", "requests": "search_bench", "rich": "search_bench",
    "jupyterlab-git": "search_bench",
    # the answer benchmark
    "starlette": "answer_bench", "gunicorn": "answer_bench", "rq": "answer_bench",
    "gin": "answer_bench", "express": "answer_bench",
    # kept for independent checks
    "flask": "held out", "httpx": "held out", "pluggy": "held out", "pytest": "held out",
    "django": "held out", "sympy": "held out", "scikit-learn": "held out",
    "matplotlib": "held out", "sphinx": "held out", "astropy": "held out",
    "pylint": "held out", "xarray": "held out", "seaborn": "held out", "cobra": "held out",
    "remeda": "held out", "conan": "held out", "reflex": "held out", "streamlink": "held out",
}  # fmt: skip

#: Import packages (folder names) of the excluded projects: a folder of that name
#: inside another distribution or mirror is a vendored copy.
IMPORT_NAMES: frozenset[str] = frozenset(
    {
        "sqlfluff", "pvlib", "pydicom", "dicom", "astroid", "pyvista", "marshmallow",
        "click", "requests", "rich", "jupyterlab_git", "starlette", "gunicorn", "rq",
        "gin", "express", "flask", "httpx", "pluggy", "pytest", "_pytest", "django",
        "sympy", "sklearn", "scikit_learn", "matplotlib", "mpl_toolkits", "sphinx",
        "astropy", "pylint", "xarray", "seaborn", "cobra", "remeda", "conans", "conan",
        "reflex", "streamlink",
    }
)  # fmt: skip

#: Known forks or re-packagings under other names.
FORKS: frozenset[str] = frozenset(
    {
        "pyvista-fork", "pydicom-fork", "flask-fork", "click-fork", "asyncclick",
        "rich-click", "cloup", "typer-slim", "scikit-learn-intelex", "sklearn",
        "pytest-asyncio-cooperative", "django-rest-framework", "requests3", "niquests",
        "requests-toolbelt", "httpx-sse", "quart", "pytest-xdist", "astroid-miner",
        "pylint-plugin-utils", "sqlfluff-templater-dbt", "marshmallow-sqlalchemy",
        "matplotlib-inline", "sphinx-rtd-theme", "streamlit",
    }
)  # fmt: skip

_SEP = re.compile(r"[-_.]+")


def normalise(name: str) -> str:
    """PEP 503 normalisation: ``Foo_Bar.baz`` -> ``foo-bar-baz``."""
    return _SEP.sub("-", name).lower()


def excluded_name(name: str) -> str | None:
    """Why the distribution ``name`` is kept out, or None when it may be used."""
    norm = normalise(name)
    if norm in EXCLUDED:
        return f"excluded ({EXCLUDED[norm]})"
    if norm in FORKS:
        return "fork or re-packaging of an excluded project"
    for project in EXCLUDED:
        if norm.startswith((f"{project}-", f"types-{project}")) or norm.endswith(f"-{project}"):
            return f"plugin, stubs or wrapper of {project}"
    return None


def vendored_path(path: str) -> str | None:
    """The excluded package a file path is inside (a vendored copy), or None."""
    parts = path.replace("\\", "/").split("/")[:-1]
    for part in parts:
        if part in IMPORT_NAMES or part.lower() in IMPORT_NAMES:
            return part
    stem = parts and path.rsplit("/", 1)[-1].removesuffix(".py")
    if stem and stem in IMPORT_NAMES and len(parts) > 1:  # a vendored single module
        return stem
    return None


def excluded_repo(owner_name: str) -> str | None:
    """Why the GitHub mirror ``owner/name`` is kept out, or None."""
    name = owner_name.split("/")[-1]
    return excluded_name(name) or (
        f"excluded ({EXCLUDED.get(normalise(name), 'vendored')})"
        if normalise(name) in {normalise(n) for n in IMPORT_NAMES}
        else None
    )
