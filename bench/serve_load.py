"""Load on ``codecite serve`` (run by hand, loopback only, bounded in time and count).

Indexes a real project (an sdist from PyPI, default ``flask==3.1.0``), starts
``codecite serve`` on a free 127.0.0.1 port with one token, then runs CLIENTS
concurrent clients for SECONDS seconds mixing search (3 of 4 requests) and extractive
ask, while an admin re-index runs beside them (a file is edited first, so the re-index
has work). Reports requests/s, p50/p95/p99 latency per kind, errors (must be 0), and
the server process's peak RSS. Also times 403s for a hidden repository against an
unknown name (they must not differ enough to tell the two apart).

    python bench/serve_load.py [--clients 16] [--seconds 60] [--project flask==3.1.0]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from index_bench import download_sdist

QUERIES = [
    "how is a request routed to a view function",
    "where are cookies signed for the session",
    "what happens when an exception is raised in a view",
    "how does the app context get pushed",
    "where are blueprints registered",
    "how are templates rendered",
    "how is JSON serialised in a response",
    "where is the config loaded from a file",
    "which tests cover url building",
    "what calls make_response",
]
#: Hard caps, whatever the arguments: this is a loopback benchmark, not a stress tool.
MAX_CLIENTS = 64
MAX_SECONDS = 300


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def codecite(*args: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "codecite", *args], capture_output=True, text=True, check=True
    )
    return proc.stdout


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def client_loop(
    url: str, token: str, stop: float, out: list[tuple[str, float, int]], seed: int
) -> None:
    rng = random.Random(seed)
    with httpx.Client(
        base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=120
    ) as http:
        while time.time() < stop:
            question = rng.choice(QUERIES)
            kind = "ask" if rng.random() < 0.25 else "search"
            started = time.perf_counter()
            if kind == "ask":
                response = http.post(
                    "/api/v1/ask", json={"question": question, "llm": "extractive"}
                )
            else:
                response = http.post("/api/v1/search", json={"query": question, "k": 10})
            out.append((kind, time.perf_counter() - started, response.status_code))


def probe_403(url: str, token: str, n: int = 200) -> dict[str, float]:
    """Median latency of a 403 for a repository that exists but is hidden vs one that
    does not exist."""
    timings: dict[str, list[float]] = {"hidden": [], "unknown": []}
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}) as http:
        for i in range(n):
            for kind, name in (("hidden", "other"), ("unknown", f"nosuch{i}")):
                started = time.perf_counter()
                response = http.post("/api/v1/search", json={"query": "x", "repos": [name]})
                assert response.status_code == 403
                timings[kind].append(time.perf_counter() - started)
    return {k: round(statistics.median(v) * 1000, 3) for k, v in timings.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--project", default="flask==3.1.0")
    args = parser.parse_args()
    clients, seconds = min(args.clients, MAX_CLIENTS), min(args.seconds, MAX_SECONDS)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        repo = download_sdist(args.project, work)
        other = work / "other"
        other.mkdir()
        (other / "hidden.py").write_text("def hidden():\n    return 1\n")
        started = time.time()
        codecite("index", str(repo), "--wait")
        codecite("index", str(other), "--no-embed")
        index_s = time.time() - started
        config = work / "server.toml"
        config.write_text(
            'auth = "token"\nstate = "state.db"\n[limits]\nrequests_per_minute = 0\n'
            f'[codecite]\nllm = "extractive"\nquery_log = false\n'
            f'[repos.project]\npath = "{repo}"\n[repos.other]\npath = "{other}"\n'
        )
        token = (
            codecite("token", "create", "bench", "--repos", "project", "--config", str(config))
            .strip()
            .splitlines()[-1]
        )
        admin = (
            codecite("token", "create", "admin", "--repos", "*", "--admin", "--config", str(config))
            .strip()
            .splitlines()[-1]
        )
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "codecite",
                "serve",
                "--config",
                str(config),
                "--port",
                str(port),
                "--log-level",
                "warning",
            ]
        )
        try:
            for _ in range(600):
                try:
                    if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    time.sleep(0.1)
            warm = httpx.post(
                f"{url}/api/v1/search",
                json={"query": "warm up"},
                headers={"Authorization": f"Bearer {token}"},
                timeout=120,
            )
            assert warm.status_code == 200, warm.text
            timing_403 = probe_403(url, token)
            edited = next(p for p in sorted(repo.rglob("*.py")) if p.stat().st_size > 2000)
            edited.write_text(edited.read_text() + "\n\ndef bench_marker():\n    return 1\n")
            results: list[tuple[str, float, int]] = []
            peak = [rss_kb(server.pid)]
            stop = time.time() + seconds
            threads = [
                threading.Thread(target=client_loop, args=(url, token, stop, results, i))
                for i in range(clients)
            ]
            for thread in threads:
                thread.start()
            time.sleep(min(5.0, seconds / 4))
            job = httpx.post(
                f"{url}/api/v1/repos/project/reindex", headers={"Authorization": f"Bearer {admin}"}
            ).json()["job"]
            job_status = job["status"]
            while any(t.is_alive() for t in threads):
                peak.append(rss_kb(server.pid))
                job_status = httpx.get(
                    f"{url}/api/v1/jobs/{job['id']}", headers={"Authorization": f"Bearer {admin}"}
                ).json()["job"]["status"]
                time.sleep(0.5)
            for thread in threads:
                thread.join()
        finally:
            server.terminate()
            server.wait(30)
    report: dict[str, object] = {
        "project": args.project,
        "clients": clients,
        "seconds": seconds,
        "index_seconds": round(index_s, 1),
        "requests": len(results),
        "requests_per_second": round(len(results) / seconds, 1),
        "errors": sum(1 for _, _, status in results if status != 200),
        "reindex_job": job_status,
        "server_peak_rss_mb": round(max(peak) / 1024, 1),
        "forbidden_403_median_ms": timing_403,
    }
    for kind in ("search", "ask"):
        times = [t for k, t, _ in results if k == kind]
        report[kind] = {
            "n": len(times),
            **{
                f"p{int(q * 100)}_ms": round(percentile(times, q) * 1000, 1)
                for q in (0.5, 0.95, 0.99)
            },
        }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
