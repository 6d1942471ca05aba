"""The distinct real corpus of ``bench/store_bench.py --corpus distinct``.

Gathered once into ``WORKDIR/corpus`` and reused by every later run, at any ``--chunks``:

1. each source (a bare git mirror, exported with ``git archive HEAD``; or a plain folder
   such as Python's standard library, its ``site-packages`` left out) is indexed by
   codecite with no model embedding (``Index.update(embed=False)``: chunks, keyword
   rows, graph) into an index folder of its own;
2. its chunks are read back, their paths get the project's name in front
   (``sympy/...``) and their ids are re-derived from it (both are then unique in one
   loaded repository), and each gets its static-tier vector (the 256-d static model
   of ``codecite.embed.static`` over ``embed_text(chunk)``: what the static stage of
   an index run of a folder holding all the projects would store). Chunks whose
   content hash an earlier source (or an earlier file) already gave are dropped
   (vendored copies, empty ``__init__.py`` files, licence headers), as are chunks with
   no known token (a zero vector has no cosine);
3. the part of each source is kept (``parts/NAME.jsonl`` + ``.npy`` + ``.json``), so
   an interrupted gathering resumes at the next source; the export and the index are
   deleted once the part is written;
4. the parts are merged into one order: whole files, sorted by a hash of their path
   (a fixed, seeded mix of all projects: the first 50,000 rows are a sample of every
   source, not one project). ``corpus.jsonl`` (one chunk a line, with its priority),
   ``offsets.npy`` (each line's byte offset: a slice is read without the lines before
   it), ``vectors.npy`` (float32, a row per line), ``files.json`` ([path, language,
   first row, rows]) and ``meta.json`` (sources with commit ids and counts).

The last files of that order, at least :data:`HOLDOUT` chunks, are never loaded:
their static vectors are the recall queries (real chunks the loaded ones do not
contain, content-wise). ``--chunks N`` loads rows ``[0, N)``, N up to
``meta["loadable"]``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from subprocess import PIPE
from typing import Any

import numpy as np

CORPUS_VERSION = 1
#: Chunks kept out of every load: the recall queries come from them.
HOLDOUT = 2000
SEED = 11
BATCH = 2000
MIRROR_ROOT = Path("/work/.mirror")
#: The default sources, in dedupe order (an earlier one keeps a shared chunk):
#: ``owner+name`` mirrors under :data:`MIRROR_ROOT` (those present), then the stdlib.
MIRRORS = (
    "sympy+sympy",
    "scipy+scipy",
    "numpy+numpy",
    "ansible+ansible",
    "astropy+astropy",
    "sqlalchemy+sqlalchemy",
    "sphinx-doc+sphinx",
    "twisted+twisted",
    "python+mypy",
    "statsmodels+statsmodels",
    "pytest-dev+pytest",
    "networkx+networkx",
    "wagtail+wagtail",
    "celery+celery",
    "pydata+xarray",
    "giiyms+pyvista",
    "pvlib+pvlib-python",
    "pydicom+pydicom",
    "pylint-dev+astroid",
    "sqlfluff+sqlfluff",
    "marshmallow-code+marshmallow",
    "psf+requests",
    "pallets+click",
    "dask+dask",
    "biopython+biopython",
    "ipython+ipython",
    "keras-team+keras",
    "scrapy+scrapy",
    "aio-libs+aiohttp",
    "nltk+nltk",
    "explosion+spaCy",
    "scikit-image+scikit-image",
    "pypa+pip",
    "mitmproxy+mitmproxy",
    "bokeh+bokeh",
)
STDLIB = "stdlib"


@dataclass
class Source:
    """One source tree: its project name, where it comes from and its commit."""

    name: str
    origin: Path
    commit: str = ""
    exclude: list[str] = field(default_factory=list)

    @property
    def bare(self) -> bool:
        return (self.origin / "HEAD").is_file() and not (self.origin / ".git").exists()


def default_sources() -> list[Source]:
    out = [
        mirror_source(MIRROR_ROOT / name / "repo")
        for name in MIRRORS
        if (MIRROR_ROOT / name / "repo" / "HEAD").is_file()
    ]
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    version = ".".join(map(str, sys.version_info[:3]))
    out.append(Source(STDLIB, stdlib, f"python-{version}", ["site-packages/"]))
    return out


def mirror_source(path: Path) -> Source:
    """A bare mirror (``.../owner+name/repo``) or a plain folder as a source."""
    path = path.resolve()
    if (path / "HEAD").is_file() and not (path / ".git").exists():
        commit = subprocess.run(
            ["git", f"--git-dir={path}", "rev-parse", "HEAD"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        return Source(path.parent.name.split("+")[-1], path, commit)
    return Source(path.name, path)


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# --- gathering -----------------------------------------------------------------------
def gather(folder: Path, sources: list[Source]) -> dict[str, Any]:
    """The corpus in ``folder`` (built, or completed, as needed); returns its meta."""
    meta_file = folder / "meta.json"
    if meta_file.is_file():
        meta: dict[str, Any] = json.loads(meta_file.read_text())
        if meta.get("version") == CORPUS_VERSION:
            return meta
    from codecite.config import Config
    from codecite.embed.static import static_embedder

    parts = folder / "parts"
    parts.mkdir(parents=True, exist_ok=True)
    config = Config(query_log=False)
    embedder = static_embedder(config)
    seen: set[str] = set()
    started = time.perf_counter()
    done = []
    for source in sources:
        info_file = parts / f"{source.name}.json"
        if info_file.is_file():
            info = json.loads(info_file.read_text())
            seen.update((parts / f"{source.name}.hashes").read_text().split())
            log(f"{source.name}: {info['chunks']} chunks (gathered before)")
        else:
            info = gather_source(folder, source, config, embedder, seen)
        done.append(info)
    gathered = time.perf_counter() - started
    meta = merge(folder, done)
    meta["seconds"] = {"gather": round(gathered, 1), "merge": meta.pop("merge_seconds")}
    meta_file.write_text(json.dumps(meta, indent=1) + "\n")
    shutil.rmtree(folder / "work", ignore_errors=True)
    return meta


def gather_source(
    folder: Path, source: Source, config: Any, embedder: Any, seen: set[str]
) -> dict[str, Any]:
    """Index one source keyword-only, give its new chunks static vectors, write its part."""
    import codecite
    from codecite.embed.text import embed_text
    from codecite.store.sqlite import SQLiteStore
    from codecite.store.sqlite.base import CHUNK_COLS, row_to_chunk

    work = folder / "work" / source.name
    tree, index_dir = work / "tree", work / "index"
    shutil.rmtree(work, ignore_errors=True)
    started = time.perf_counter()
    missing = 0
    if source.bare:
        missing = export_tree(source.origin, tree)
    else:
        tree = source.origin
    exported = time.perf_counter()
    cfg = config.replace(repo_name=source.name, exclude=list(source.exclude))
    with codecite.open_index(tree, index_dir=index_dir, config=cfg) as index:
        report = index.update(embed=False)
    indexed = time.perf_counter()
    counts = {"read": 0, "chunks": 0, "duplicates": 0, "no_vector": 0}
    vectors: list[np.ndarray] = []
    hashes: list[str] = []
    parts = folder / "parts"
    store = SQLiteStore(index_dir, create=False, readonly=True)
    tmp = parts / f"{source.name}.jsonl.tmp"
    try:
        cursor = store.conn.execute(f"SELECT {CHUNK_COLS}, priority FROM chunks ORDER BY rowid")
        with tmp.open("w", encoding="utf-8") as out:
            while rows := cursor.fetchmany(BATCH):
                counts["read"] += len(rows)
                chunks, priorities = [], []
                for row in rows:
                    chunk = row_to_chunk(row[:-1])
                    if chunk.content_hash in seen:
                        counts["duplicates"] += 1
                        continue
                    seen.add(chunk.content_hash)
                    chunks.append(renamed(chunk, source.name))
                    priorities.append(float(row[-1]))
                if not chunks:
                    continue
                matrix = embedder.embed([embed_text(c) for c in chunks], "document")
                keep = np.flatnonzero(np.linalg.norm(matrix, axis=1) > 0)
                counts["no_vector"] += len(chunks) - len(keep)
                for i in keep:
                    chunk = chunks[i]
                    out.write(json.dumps({**row_dict(chunk), "priority": priorities[i]}) + "\n")
                    hashes.append(chunk.content_hash)
                vectors.append(matrix[keep].astype(np.float32))
                counts["chunks"] += len(keep)
    finally:
        store.close()
    matrix = np.vstack(vectors) if vectors else np.zeros((0, embedder.dim), np.float32)
    np.save(parts / f"{source.name}.npy", matrix)
    (parts / f"{source.name}.hashes").write_text("\n".join(hashes) + "\n")
    tmp.replace(parts / f"{source.name}.jsonl")
    finished = time.perf_counter()
    info = {
        "name": source.name,
        "origin": str(source.origin),
        "commit": source.commit,
        "files": report.files_seen,
        "missing_files": missing,
        **counts,
        "seconds": {
            "export": round(exported - started, 1),
            "index": round(indexed - exported, 1),
            "static": round(finished - indexed, 1),
        },
    }
    (parts / f"{source.name}.json").write_text(json.dumps(info) + "\n")
    shutil.rmtree(work, ignore_errors=True)
    commit = source.commit[:12] if source.bare else source.commit
    log(
        f"{source.name} ({commit}): {report.files_seen} files, {counts['read']} "
        f"chunks, {counts['chunks']} kept ({counts['duplicates']} duplicates, "
        f"{counts['no_vector']} without a vector); {info['seconds']}"
    )
    return info


def export_tree(git_dir: Path, dest: Path) -> int:
    """Write the files of HEAD of a bare repository under ``dest`` (what ``git archive``
    gives, but going on past blobs the snapshot lacks: its largest files may be listed
    and absent); returns the number of files missing. Symbolic links and submodules
    are left out."""
    git = ["git", f"--git-dir={git_dir}"]
    listing = subprocess.run(
        [*git, "ls-tree", "-r", "-z", "HEAD"], check=True, capture_output=True
    ).stdout
    entries = []
    for record in listing.split(b"\0"):
        if record:
            info, name = record.split(b"\t", 1)
            mode, kind, sha = info.split()
            if kind == b"blob" and mode != b"120000":
                entries.append((sha, os.fsdecode(name)))
    proc = subprocess.Popen([*git, "cat-file", "--batch"], stdin=PIPE, stdout=PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    feeder = threading.Thread(
        target=_feed, args=(proc.stdin, [sha for sha, _ in entries]), daemon=True
    )
    feeder.start()
    missing = 0
    for _, path in entries:
        header = proc.stdout.readline().split()
        if header[-1] == b"missing":
            missing += 1
            continue
        data = proc.stdout.read(int(header[2]))
        proc.stdout.read(1)  # the newline after the content
        target = dest / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    feeder.join()
    if proc.wait():
        raise SystemExit(f"git cat-file failed in {git_dir}")
    return missing


def _feed(stdin: Any, shas: list[bytes]) -> None:
    for sha in shas:
        stdin.write(sha + b"\n")
    stdin.close()


def renamed(chunk: Any, project: str) -> Any:
    """The chunk under ``project/PATH``, its id derived from the project and its old id."""
    new_id = hashlib.sha256(f"{project}\0{chunk.id}".encode()).hexdigest()[: len(chunk.id)]
    return replace(chunk, id=new_id, repo="", path=f"{project}/{chunk.path}")


def row_dict(chunk: Any) -> dict[str, Any]:
    out = asdict(chunk)
    del out["repo"]
    return out


def merge(folder: Path, sources: list[dict[str, Any]]) -> dict[str, Any]:
    """Write the parts as one corpus: whole files in a seeded hash order."""
    started = time.perf_counter()
    # (path, language) of each part's lines and their byte spans, grouped by file
    groups: dict[str, tuple[str, list[tuple[int, int, int, int]]]] = {}
    dim = 0
    for p, info in enumerate(sources):
        name = info["name"]
        dim = dim or int(np.load(folder / "parts" / f"{name}.npy", mmap_mode="r").shape[1])
        offset = 0
        with (folder / "parts" / f"{name}.jsonl").open("rb") as fh:
            for row, line in enumerate(fh):
                data = json.loads(line)
                entry = groups.setdefault(data["path"], (data["language"], []))
                entry[1].append((p, row, offset, len(line)))
                offset += len(line)
    order = sorted(groups, key=lambda path: hashlib.sha256(f"{SEED}:{path}".encode()).digest())
    total = sum(len(rows) for _, rows in groups.values())
    files: list[tuple[str, str, int, int]] = []
    offsets = np.zeros(total + 1, dtype=np.int64)
    source_of = np.zeros(total, dtype=np.int32)
    row_of = np.zeros(total, dtype=np.int64)
    handles = [(folder / "parts" / f"{s['name']}.jsonl").open("rb") for s in sources]
    n, position = 0, 0
    try:
        with (folder / "corpus.jsonl.tmp").open("wb") as out:
            for path in order:
                language, rows = groups.pop(path)
                files.append((path, language, n, len(rows)))
                for p, row, offset, length in rows:
                    handles[p].seek(offset)
                    out.write(handles[p].read(length))
                    source_of[n], row_of[n] = p, row
                    position += length
                    n += 1
                    offsets[n] = position
    finally:
        for handle in handles:
            handle.close()
    vectors = np.lib.format.open_memmap(
        folder / "vectors.npy.tmp", mode="w+", dtype=np.float32, shape=(total, dim)
    )
    for p, info in enumerate(sources):
        part = np.load(folder / "parts" / f"{info['name']}.npy", mmap_mode="r")
        dest = np.flatnonzero(source_of == p)
        vectors[dest] = part[row_of[dest]]
    vectors.flush()
    del vectors
    np.save(folder / "offsets.npy", offsets)
    (folder / "files.json").write_text(json.dumps(files))
    (folder / "vectors.npy.tmp").replace(folder / "vectors.npy")
    (folder / "corpus.jsonl.tmp").replace(folder / "corpus.jsonl")
    held, first = 0, len(files)
    while held < HOLDOUT and first > 0:
        first -= 1
        held += files[first][3]
    from codecite.embed.static import STATIC_MODEL_NAME
    from codecite.embed.text import EMBED_TEXT_VERSION

    return {
        "version": CORPUS_VERSION,
        "total": total,
        "loadable": files[first][2] if first < len(files) else total,
        "files": len(files),
        "dim": dim,
        "static_model": STATIC_MODEL_NAME,
        "static_text_version": EMBED_TEXT_VERSION,
        "seed": SEED,
        "sources": sources,
        "merge_seconds": round(time.perf_counter() - started, 1),
    }


# --- reading ---------------------------------------------------------------------------
class DistinctRows:
    """Rows ``[0, size)`` of a gathered corpus, streamed from its files (the loader
    processes each read their own slice)."""

    def __init__(self, folder: Path, size: int) -> None:
        self.folder = folder
        self.meta = json.loads((folder / "meta.json").read_text())
        if size > self.meta["loadable"]:
            raise SystemExit(
                f"the corpus in {folder} has {self.meta['loadable']:,} loadable chunks "
                f"(plus {self.meta['total'] - self.meta['loadable']:,} held out for the "
                f"recall queries), fewer than --chunks {size:,}"
            )
        self.size = size
        self.offsets = np.load(folder / "offsets.npy")
        self.file_rows: list[list[Any]] = json.loads((folder / "files.json").read_text())

    def __len__(self) -> int:
        return self.size

    def files(self, start: int, stop: int) -> dict[str, tuple[str, int]]:
        """Path → (language, rows in ``[start, stop)``)."""
        out: dict[str, tuple[str, int]] = {}
        for path, language, first, count in self.file_rows:
            n = min(first + count, stop) - max(first, start)
            if n > 0:
                out[path] = (language, n)
        return out

    def batches(
        self, start: int, stop: int, size: int = BATCH
    ) -> Iterator[tuple[list[Any], list[float], np.ndarray]]:
        """(chunks, priorities, vectors) of rows ``[start, stop)``, ``size`` at a time."""
        from codecite.types import Chunk

        vectors = np.load(self.folder / "vectors.npy", mmap_mode="r")
        with (self.folder / "corpus.jsonl").open("rb") as fh:
            fh.seek(int(self.offsets[start]))
            for first in range(start, stop, size):
                last = min(first + size, stop)
                chunks, priorities = [], []
                for _ in range(first, last):
                    data = json.loads(fh.readline())
                    priorities.append(float(data.pop("priority")))
                    chunks.append(Chunk(repo="", **data))
                yield chunks, priorities, np.array(vectors[first:last], dtype=np.float32)

    def query_vectors(self, n: int) -> np.ndarray:
        """Static vectors of ``n`` held-out chunks (never loaded), spread over them."""
        vectors = np.load(self.folder / "vectors.npy", mmap_mode="r")
        held = np.arange(self.meta["loadable"], self.meta["total"])
        rng = np.random.default_rng(SEED + 1)
        picks = np.sort(rng.choice(held, size=min(n, len(held)), replace=False))
        return np.array(vectors[picks], dtype=np.float32)

    def per_source(self) -> dict[str, int]:
        """Loaded rows per source project."""
        out: dict[str, int] = {}
        for path, (_, n) in self.files(0, self.size).items():
            project = path.split("/", 1)[0]
            out[project] = out.get(project, 0) + n
        return out


def main() -> None:
    """Gather the corpus alone: ``python bench/store_corpus.py WORKDIR``."""
    import argparse

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("workdir", type=Path)
    parser.add_argument("--source", type=Path, action="append", default=[])
    args = parser.parse_args()
    sources = [mirror_source(p) for p in args.source] or default_sources()
    meta = gather(args.workdir / "corpus", sources)
    log(
        f"{meta['total']:,} distinct chunks ({meta['loadable']:,} loadable) in "
        f"{meta['files']:,} files from {len(meta['sources'])} sources; {meta['seconds']}"
    )


if __name__ == "__main__":
    main()
