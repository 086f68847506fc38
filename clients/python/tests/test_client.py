"""The client against a real stem serve (see conftest.py), and its error
handling against a scripted HTTP server."""

from __future__ import annotations

import json
import subprocess
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Iterator, List, Tuple

import pytest

from stem_client import (
    Answer,
    AskResult,
    Entity,
    Neighbours,
    StemClient,
    StemConnectionError,
    StemError,
    Triple,
)

from conftest import TOKEN, Server


def test_ask_answers_with_evidence(server: Server) -> None:
    r = StemClient(server.url).ask("in which country was the director of inception born ?")
    assert isinstance(r, AskResult)
    assert [a.answer for a in r.answers] == ["United_Kingdom"]
    top = r.answers[0]
    assert isinstance(top, Answer) and top.supported and top.entity == "United_Kingdom"
    assert "Inception -> directed_by -> Christopher_Nolan -> place_of_birth -> London -> located_in -> United_Kingdom" in top.chains
    assert r.audit.unbacked == 0 and r.audit.answers == 1 and r.audit.evidence_triples > 0
    assert set(r.timings_ms) >= {"link", "plan", "trace", "generate"}
    assert r.explain is None


def test_ask_is_the_route_as_curl_sees_it(server: Server) -> None:
    """The typed result holds what a plain POST returns, field for field."""
    body = json.dumps({"question": "who directed inception ?", "strategy": "precision"}).encode()
    req = urllib.request.Request(server.url + "/v1/ask", data=body, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as res:
        plain = json.load(res)
    r = StemClient(server.url).ask("who directed inception ?", strategy="precision")
    assert r.raw["answers"] == plain["answers"] and r.raw["chains"] == plain["chains"]
    assert [a.answer for a in r.answers] == [a["answer"] for a in plain["answers"]] == ["Christopher_Nolan"]
    assert r.chains == plain["chains"]


def test_ask_with_entities_and_explain(server: Server) -> None:
    r = StemClient(server.url).ask("who starred in it ?", entities=["Inception"], explain=True)
    names = {a.answer for a in r.answers}
    assert {"Leonardo_DiCaprio", "Elliot_Page", "Tom_Hardy"} <= names
    assert r.explain is not None
    assert any(m["triple"][0] == "Inception" for m in r.explain["matched_triples"])


@pytest.mark.parametrize(
    "kwargs, status, code",
    [
        ({"question": "what is the meaning of life ?"}, 422, "no_entity"),
        ({"question": "who directed it ?", "entities": ["No_Such_Film"]}, 422, "unknown_entity"),
        ({"question": "who directed inception ?", "strategy": "wide"}, 400, "bad_strategy"),
        ({"question": ""}, 400, "no_question"),
        ({"question": "who directed inception ?", "planner": "gpt"}, 400, "unknown_planner"),
    ],
)
def test_ask_errors_carry_the_server_code(server: Server, kwargs: dict, status: int, code: str) -> None:
    with pytest.raises(StemError) as e:
        StemClient(server.url).ask(**kwargs)
    assert (e.value.status, e.value.code) == (status, code)
    assert e.value.message and e.value.code in str(e.value)


def test_search_entities(server: Server) -> None:
    hits = StemClient(server.url).search_entities("christopher nolan", k=2)
    assert len(hits) == 2 and all(isinstance(h, Entity) for h in hits)
    assert hits[0].name == "Christopher_Nolan" and hits[0].score >= hits[1].score
    with pytest.raises(StemError) as e:
        StemClient(server.url).search_entities("nolan", k=1000)
    assert (e.value.status, e.value.code) == (400, "bad_k")


def test_neighbours(server: Server) -> None:
    n = StemClient(server.url).neighbours("Inception", limit=2)
    assert isinstance(n, Neighbours)
    assert n.entity == "Inception" and n.degree == 13 and n.truncated and len(n.triples) == 2
    assert all(isinstance(t, Triple) and t.head == "Inception" for t in n.triples)
    assert n.triples[0] == Triple("Inception", "directed_by", "Christopher_Nolan")
    # A name with a space and other case reaches the entity; a path-unsafe
    # name is sent escaped.
    assert StemClient(server.url).neighbours("christopher nolan").entity == "Christopher_Nolan"
    with pytest.raises(StemError) as e:
        StemClient(server.url).neighbours("no/such entity?")
    assert (e.value.status, e.value.code) == (404, "unknown_entity")


def test_health_reports_the_binary_version(server: Server) -> None:
    h = StemClient(server.url).health()
    first = subprocess.run([server.binary, "version"], capture_output=True, text=True, check=True).stdout.splitlines()[0]
    assert h.status == "ok" and first == "stem " + h.version
    assert StemClient(server.url).ready()


def test_token(token_server: Server) -> None:
    with pytest.raises(StemError) as e:
        StemClient(token_server.url).ask("who directed inception ?")
    assert (e.value.status, e.value.code) == (401, "unauthorized")
    with pytest.raises(StemError) as e:
        StemClient(token_server.url, token="wrong").neighbours("Inception")
    assert e.value.code == "unauthorized"
    r = StemClient(token_server.url, token=TOKEN).ask("who directed inception ?")
    assert r.answers[0].answer == "Christopher_Nolan"
    # The health check needs no token.
    assert StemClient(token_server.url).health().status == "ok"


def test_unreachable() -> None:
    with pytest.raises(StemConnectionError) as e:
        StemClient("http://127.0.0.1:9", timeout=2).health()
    assert e.value.status is None and e.value.code == "connection"
    with pytest.raises(ValueError):
        StemClient("localhost:8080")


# A scripted server for what a real one does not do on demand: refuse
# with 503 and Retry-After, or answer something that is not stem's JSON.


@pytest.fixture
def scripted() -> Iterator[Tuple[str, List[Tuple[int, dict, str]], List[str]]]:
    replies: List[Tuple[int, dict, str]] = []
    seen: List[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(self.headers.get("Authorization", ""))
            status, headers, body = replies.pop(0)
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body.encode())

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", replies, seen
    httpd.shutdown()
    httpd.server_close()


def test_busy_is_retried_after_retry_after(scripted) -> None:
    url, replies, seen = scripted
    busy = (503, {"Content-Type": "application/json", "Retry-After": "0"}, '{"error": "64 questions are being answered", "code": "busy"}')
    ok = (200, {"Content-Type": "application/json"}, '{"query": "x", "entities": [{"name": "X", "score": 0.5}]}')
    replies += [busy, busy, ok]
    assert StemClient(url, token="t").search_entities("x") == [Entity("X", 0.5)]
    assert seen == ["Bearer t"] * 3
    replies += [busy, busy]
    with pytest.raises(StemError) as e:
        StemClient(url, retries=1).search_entities("x")
    assert (e.value.status, e.value.code, e.value.retry_after) == (503, "busy", 0.0)


def test_foreign_replies(scripted) -> None:
    url, replies, _ = scripted
    replies += [(502, {"Content-Type": "text/html"}, "<html>bad gateway</html>"), (200, {}, "not json")]
    with pytest.raises(StemError) as e:
        StemClient(url).health()
    assert (e.value.status, e.value.code) == (502, "http_502") and "bad gateway" in e.value.message
    with pytest.raises(StemError) as e:
        StemClient(url).health()
    assert e.value.code == "bad_reply"
