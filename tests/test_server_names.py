"""``POST /api/v1/search`` takes ``query`` and ``/ask`` takes ``question``; each takes the
other's name too, so a script written for one works for the other (issue 39, item 7).
A real ``codecite serve`` on a loopback port (no tokens: auth = "none" on loopback)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from repos import copy_index, free_port, start_server


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory, indexed_shop: Path) -> Iterator[httpx.Client]:
    root = tmp_path_factory.mktemp("names")
    shop = copy_index(indexed_shop, root / "shop")
    port = free_port()
    config = root / "codecite-server.toml"
    config.write_text(
        f'listen = "127.0.0.1:{port}"\nauth = "none"\nstate = "state.db"\n'
        f'[codecite]\nllm = "extractive"\n[repos.shop]\npath = "{shop}"\n'
    )
    process = start_server(config, port, root / "server.log")
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}/api/v1", timeout=120) as client:
            yield client
    finally:
        process.terminate()
        process.wait(30)


@pytest.mark.parametrize("name", ["query", "question"])
def test_search_takes_query_or_question(api: httpx.Client, name: str) -> None:
    response = api.post("/search", json={name: "loyalty discount", "k": 3})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["query"] == "loyalty discount" and body["results"]


@pytest.mark.parametrize("name", ["question", "query"])
def test_ask_takes_question_or_query(api: httpx.Client, name: str) -> None:
    response = api.post("/ask", json={name: "How is the loyalty discount computed?"})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["question"] == "How is the loyalty discount computed?" and body["citations"]


def test_neither_name_is_a_clear_422(api: httpx.Client) -> None:
    response = api.post("/ask", json={"text": "How is the loyalty discount computed?"})
    assert response.status_code == 422
    assert "question" in response.text
