"""A client of stem serve's JSON HTTP API, in the Python standard library.

The routes and their JSON are the server's (docs/serving.md); each
result comes back as a frozen dataclass whose fields are the JSON's, and
keeps the whole reply in ``raw`` so that a field a newer server adds is not
lost. Every error the server answers becomes a StemError carrying its HTTP
status and its stable ``code`` ("no_entity", "unauthorized", "busy", ...).
"""

from __future__ import annotations

import json
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Any, Dict, List, NamedTuple, Optional, Sequence

__all__ = [
    "Answer",
    "AskResult",
    "Audit",
    "Entity",
    "Health",
    "Neighbours",
    "StemClient",
    "StemConnectionError",
    "StemError",
    "Triple",
]


class StemError(Exception):
    """An error the server answered, or (StemConnectionError) no answer.

    status is the HTTP status (None when no reply came), code the server's
    stable error code, message its explanation, and retry_after the seconds
    its Retry-After header asked for (None when it sent none).
    """

    def __init__(self, status: Optional[int], code: str, message: str, retry_after: Optional[float] = None):
        super().__init__(f"stem: {code} ({status}): {message}" if status else f"stem: {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.retry_after = retry_after


class StemConnectionError(StemError):
    """The server could not be reached, or did not answer in time."""

    def __init__(self, message: str):
        super().__init__(None, "connection", message)


@dataclass(frozen=True)
class Answer:
    """One answer: its name, the KG entity it names when the evidence
    supports it, its score, and the reasoning chains that back it."""

    answer: str
    entity: str
    score: float
    supported: bool
    chains: List[str]

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Answer":
        return cls(
            answer=d["answer"],
            entity=d.get("entity", ""),
            score=float(d.get("score", 0)),
            supported=bool(d.get("supported", False)),
            chains=list(d.get("chains") or []),
        )


@dataclass(frozen=True)
class Audit:
    """The faithfulness audit: evidence triples, answers, and the answers
    no evidence backs (0 when every answer is backed)."""

    evidence_triples: int
    answers: int
    unbacked: int


@dataclass(frozen=True)
class AskResult:
    """The reply of POST /v1/ask, the JSON ``stem ask --json`` prints.
    explain holds the whole trace (plans, anchors, matched triples with
    their T-Scores) when it was asked for, else None."""

    question: str
    answers: List[Answer]
    chains: List[str]
    timings_ms: Dict[str, float]
    audit: Audit
    explain: Optional[Dict[str, Any]] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "AskResult":
        a = d.get("audit") or {}
        return cls(
            question=d.get("question", ""),
            answers=[Answer.from_json(x) for x in d.get("answers") or []],
            chains=list(d.get("chains") or []),
            timings_ms={k: float(v) for k, v in (d.get("timings_ms") or {}).items()},
            audit=Audit(int(a.get("evidence_triples", 0)), int(a.get("answers", 0)), int(a.get("unbacked", 0))),
            explain=d.get("explain"),
            raw=d,
        )


@dataclass(frozen=True)
class Entity:
    """An entity search hit: the KG name and its similarity to the query."""

    name: str
    score: float


class Triple(NamedTuple):
    """A KG triple."""

    head: str
    relation: str
    tail: str


@dataclass(frozen=True)
class Neighbours:
    """An entity's triples, outgoing first: degree counts all of them,
    triples holds up to the limit, and truncated says whether it cut."""

    entity: str
    degree: int
    triples: List[Triple]
    truncated: bool


@dataclass(frozen=True)
class Health:
    """GET /healthz: "ok" and the server's version (what ``stem version``
    prints first)."""

    status: str
    version: str


class StemClient:
    """A client of one stem server.

    >>> stem = StemClient("http://127.0.0.1:8080", token=os.environ.get("STEM_TOKEN"))
    >>> r = stem.ask("who directed inception ?")
    >>> r.answers[0].answer, r.answers[0].chains[0]

    token is sent as "Authorization: Bearer TOKEN" (the server's
    --token-env). timeout bounds each request, in seconds. A reply of 503
    (the server is loading, or answering its most questions at once) is
    retried up to retries times, after the Retry-After it asks for (at most
    max_wait seconds); the last one raises.
    """

    def __init__(
        self,
        base_url: str = "http://127.0.0.1:8080",
        token: Optional[str] = None,
        timeout: float = 60.0,
        retries: int = 2,
        max_wait: float = 10.0,
    ):
        parsed = urllib.parse.urlsplit(base_url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise ValueError(f"base_url {base_url!r}: want http(s)://host:port")
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.retries = retries
        self.max_wait = max_wait

    def ask(
        self,
        question: str,
        entities: Optional[Sequence[str]] = None,
        planner: Optional[str] = None,
        strategy: Optional[str] = None,
        explain: bool = False,
    ) -> AskResult:
        """Answer a question with the KG evidence behind every answer.

        entities names the question's KG entities when the caller knows
        them (else the server links them); planner picks one the server
        holds; strategy is "auto", "precision" or "breadth"; explain asks
        for the whole trace.
        """
        body: Dict[str, Any] = {"question": question}
        if entities:
            body["entities"] = list(entities)
        if planner:
            body["planner"] = planner
        if strategy:
            body["strategy"] = strategy
        if explain:
            body["explain"] = True
        return AskResult.from_json(self._request("POST", "/v1/ask", body=body))

    def search_entities(self, query: str, k: int = 10) -> List[Entity]:
        """The k KG entities nearest to query, best first."""
        d = self._request("GET", "/v1/entities", params={"q": query, "k": k})
        return [Entity(e["name"], float(e.get("score", 0))) for e in d.get("entities") or []]

    def neighbours(self, entity: str, limit: int = 100) -> Neighbours:
        """The triples of a KG entity (its exact name, or a name matched
        ignoring case and spaces), outgoing first, up to limit."""
        path = "/v1/entities/" + urllib.parse.quote(entity, safe="") + "/neighbours"
        d = self._request("GET", path, params={"limit": limit})
        return Neighbours(
            entity=d["entity"],
            degree=int(d.get("degree", 0)),
            triples=[Triple(*t) for t in d.get("triples") or []],
            truncated=bool(d.get("truncated", False)),
        )

    def health(self) -> Health:
        """Whether the server is up, and its version (no token needed)."""
        d = self._request("GET", "/healthz")
        return Health(d.get("status", ""), d.get("version", ""))

    def ready(self) -> bool:
        """Whether the KG and models are loaded (False while loading or
        shutting down)."""
        try:
            self._request("GET", "/readyz", retry=False)
        except StemError as e:
            if e.status == 503:
                return False
            raise
        return True

    def _request(
        self,
        method: str,
        path: str,
        body: Optional[Dict[str, Any]] = None,
        params: Optional[Dict[str, Any]] = None,
        retry: bool = True,
    ) -> Dict[str, Any]:
        url = self.base_url + path
        if params:
            url += "?" + urllib.parse.urlencode(params)
        data = None if body is None else json.dumps(body).encode("utf-8")
        attempt = 0
        while True:
            req = urllib.request.Request(url, data=data, method=method)
            req.add_header("Accept", "application/json")
            if data is not None:
                req.add_header("Content-Type", "application/json")
            if self.token:
                req.add_header("Authorization", "Bearer " + self.token)
            try:
                with urllib.request.urlopen(req, timeout=self.timeout) as res:
                    return _decode(res.status, res.read())
            except urllib.error.HTTPError as e:
                err = _error(e)
                if retry and e.code == 503 and attempt < self.retries:
                    attempt += 1
                    time.sleep(min(err.retry_after or 1.0, self.max_wait))
                    continue
                raise err from None
            except (urllib.error.URLError, socket.timeout, ConnectionError) as e:
                reason = getattr(e, "reason", e)
                raise StemConnectionError(f"{method} {url}: {reason}") from None


def _decode(status: int, payload: bytes) -> Dict[str, Any]:
    try:
        d = json.loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise StemError(status, "bad_reply", f"the reply is not JSON: {e}") from None
    if not isinstance(d, dict):
        raise StemError(status, "bad_reply", "the reply is not a JSON object")
    return d


def _error(e: urllib.error.HTTPError) -> StemError:
    """The StemError for an HTTP error reply: the server's JSON
    {"error", "code"} when it sent one, else the status and body."""
    payload = e.read()
    retry_after: Optional[float] = None
    ra = e.headers.get("Retry-After") if e.headers else None
    if ra:
        try:
            retry_after = float(ra)
        except ValueError:
            retry_after = None
    try:
        d = json.loads(payload.decode("utf-8"))
        if isinstance(d, dict) and "code" in d:
            return StemError(e.code, str(d["code"]), str(d.get("error", "")), retry_after)
    except (UnicodeDecodeError, json.JSONDecodeError):
        pass
    text = payload.decode("utf-8", "replace").strip()[:200]
    return StemError(e.code, f"http_{e.code}", text or str(e.reason), retry_after)
