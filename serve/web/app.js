// stem's evidence viewer: asks POST /v1/ask with explain and draws the
// answers and the matched triples. Every piece of data reaches the page
// through textContent or setAttribute, never as markup.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const TOKEN_KEY = "stem.token";
// The stages in the order the pipeline runs them; others follow.
const STAGES = ["link", "plan", "guide", "trace", "generate"];

// Layout, in SVG user units.
const R = 9; // node radius
const ROW = 80; // vertical gap between nodes of one layer
const PAD = 24; // margin around the drawing
const CHAR = 7; // rough width of one label character at 12px

const $ = (id) => document.getElementById(id);

function el(tag, attrs, text) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

function svg(tag, attrs, text) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

// sessionStorage can be refused (private modes, sandboxed frames); the
// token then lives only in its field.
function loadToken() {
  try { return sessionStorage.getItem(TOKEN_KEY) || ""; } catch { return ""; }
}
function saveToken(v) {
  try { if (v) sessionStorage.setItem(TOKEN_KEY, v); else sessionStorage.removeItem(TOKEN_KEY); } catch { /* kept in the field */ }
}

function setState(s) { document.body.dataset.state = s; }

function showError(msg) {
  const e = $("error");
  e.textContent = msg;
  e.hidden = false;
  setState("error");
}

let inflight = null;

async function ask(question) {
  if (inflight) inflight.abort();
  const ctl = new AbortController();
  inflight = ctl;
  setState("loading");
  $("error").hidden = true;
  $("result").setAttribute("aria-busy", "true");
  const headers = { "Content-Type": "application/json" };
  const token = $("token").value.trim();
  if (token) headers.Authorization = "Bearer " + token;
  let resp, body;
  try {
    resp = await fetch("/v1/ask", {
      method: "POST", headers, signal: ctl.signal,
      body: JSON.stringify({ question, explain: true }),
    });
    body = await resp.json().catch(() => null);
  } catch (err) {
    if (ctl.signal.aborted) return; // a newer question replaced this one
    showError("Could not reach the server: " + err.message);
    return;
  } finally {
    if (inflight === ctl) inflight = null;
    $("result").removeAttribute("aria-busy");
  }
  if (ctl.signal.aborted) return;
  if (resp.status === 401) {
    $("auth").hidden = false;
    $("token").focus();
    showError((token ? "The server refused this token. " : "This server wants a token: enter it above and ask again. ") +
      ((body && body.error) || ""));
    return;
  }
  if (!resp.ok || !body) {
    showError((body && body.error) || `The server answered ${resp.status} ${resp.statusText}.`);
    return;
  }
  render(body);
  setState("done");
}

// NO_ANSWER is what the page says when the KG holds no evidence at all.
const NO_ANSWER = "No answer: the KG holds no evidence that matches the question's plan.";

function render(v) {
  $("result").hidden = false;
  renderAnswers(v.answers || []);
  const a = v.audit || {};
  const audit = $("audit");
  audit.textContent = `Audit: ${count(a.evidence_triples, "evidence triple")}, ${count(a.answers, "answer")}, ${a.unbacked ?? 0} unbacked`;
  audit.classList.toggle("warn", (a.unbacked || 0) > 0);
  // The answer's confidence (plan selection's), and why it was withheld.
  if (typeof v.confidence === "number") {
    audit.textContent += ` · confidence ${v.confidence.toFixed(2)}${v.calibrated ? "" : " (uncalibrated)"}`;
  }
  $("none").textContent = v.abstained ? `No answer: ${v.abstain}.` : NO_ANSWER;
  const t = v.timings_ms || {};
  const names = STAGES.filter((s) => s in t).concat(Object.keys(t).filter((s) => !STAGES.includes(s)).sort());
  $("timings").textContent = "Timings: " + (names.map((s) => `${s} ${fmtMs(t[s])}`).join(", ") || "none");
  const ex = v.explain || {};
  renderPlan(ex);
  drawGraph($("graph"), ex.matched_triples || [], (ex.anchors || []).map((x) => x.Name),
    (v.answers || []).map((x) => x.entity || x.answer), chainTriples(v.answers || []));
}

function count(n, noun) {
  n = n || 0;
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

function fmtMs(ms) {
  return (ms >= 10 ? ms.toFixed(0) : ms >= 1 ? ms.toFixed(1) : ms.toPrecision(2)) + " ms";
}

function renderAnswers(answers) {
  const ol = $("answers");
  ol.replaceChildren();
  $("none").hidden = answers.length > 0;
  for (const a of answers) {
    const li = el("li", { class: "answer" });
    const head = el("div", { class: "head" });
    head.append(el("span", { class: "name" }, a.answer));
    if (!a.supported) {
      head.append(el("span", { class: "unsupported", title: "No evidence in the KG names this answer" }, "unsupported"));
    }
    if (typeof a.score === "number") head.append(el("span", { class: "score" }, "score " + a.score.toFixed(2)));
    li.append(head);
    const chains = a.chains || [];
    if (chains.length) {
      const ul = el("ul", { class: "chains" });
      for (const c of chains) ul.append(el("li", {}, c));
      if (chains.length > 3) {
        const d = el("details");
        d.append(el("summary", {}, `${chains.length} supporting chains`), ul);
        li.append(d);
      } else {
        li.append(ul);
      }
    }
    ol.append(li);
  }
}

function renderPlan(ex) {
  const dl = $("plan");
  dl.replaceChildren();
  const add = (term, items) => {
    if (!items.length) return;
    dl.append(el("dt", {}, term));
    for (const it of items) dl.append(el("dd", {}, it));
  };
  add("Strategy", ex.strategy ? [ex.strategy] : []);
  add("Linked entities", (ex.entities || []).map((l) => `“${l.Mention}” → ${l.Entity} (${l.Method}, ${Number(l.Score).toFixed(2)})`));
  add("Schema graphs", ex.schema_graphs || []);
  add("Problems", ex.problems || []);
}

// chainTriples returns the triples the answers' chains walk, keyed as
// drawGraph keys them: a chain reads "A -> rel -> B -> rel2 -> C".
function chainTriples(answers) {
  const keys = new Set();
  for (const a of answers) {
    for (const c of a.chains || []) {
      const p = c.split(" -> ");
      for (let i = 0; i + 2 < p.length; i += 2) keys.add([p[i], p[i + 1], p[i + 2]].join("\u0000"));
    }
  }
  return keys;
}

// layout places each entity of the triples in a column by its BFS
// distance from the anchors, ignoring direction (evidence is walked both
// ways), and sorts each column by name so a question always draws alike.
function layout(triples, anchors) {
  const adj = new Map();
  const link = (a, b) => {
    if (!adj.has(a)) adj.set(a, new Set());
    adj.get(a).add(b);
  };
  for (const [h, , t] of triples) { link(h, t); link(t, h); }
  const names = [...adj.keys()].sort();
  const layer = new Map();
  let frontier = anchors.filter((a) => adj.has(a));
  // With no anchor among the triples, start where edges leave.
  if (!frontier.length) {
    const tails = new Set(triples.map((x) => x[2]));
    frontier = names.filter((n) => !tails.has(n));
    if (!frontier.length) frontier = names.slice(0, 1);
  }
  let d = 0;
  for (const n of frontier) layer.set(n, 0);
  // Each pass walks one BFS level; a part of the graph no walk reaches
  // starts again one column further right.
  while (layer.size < names.length) {
    const next = [];
    for (const n of frontier) {
      for (const m of [...adj.get(n)].sort()) {
        if (!layer.has(m)) { layer.set(m, d + 1); next.push(m); }
      }
    }
    d++;
    if (!next.length) {
      const rest = names.find((n) => !layer.has(n));
      if (rest === undefined) break;
      layer.set(rest, d);
      next.push(rest);
    }
    frontier = next;
  }
  const cols = [];
  for (const n of names) (cols[layer.get(n)] ||= []).push(n);
  return cols.filter(Boolean);
}

function drawGraph(root, matched, anchors, answers, support) {
  root.replaceChildren();
  // One edge per distinct triple: a triple matched by several schema
  // graphs shows its best T-Score.
  const best = new Map();
  for (const m of matched) {
    const key = m.triple.join("\u0000");
    if (!best.has(key) || m.t_score > best.get(key).t_score) best.set(key, m);
  }
  // The answers' edges are drawn last, over the rest.
  const rank = (m) => (support.has(m.triple.join("\u0000")) ? "1" : "0") + m.triple.join("\u0000");
  // Code-unit order, not the reader's locale: the drawing is the same anywhere.
  const edges = [...best.values()].sort((a, b) => (rank(a) < rank(b) ? -1 : rank(a) > rank(b) ? 1 : 0));
  if (!edges.length) {
    root.setAttribute("viewBox", "0 0 320 40");
    root.style.maxWidth = "320px";
    root.append(svg("text", { x: 8, y: 24, class: "empty" }, "No evidence triple matched."));
    return;
  }
  const cols = layout(edges.map((m) => m.triple), anchors);
  const longest = Math.max(...cols.flat().map((n) => n.length), ...edges.map((m) => m.triple[1].length));
  const colGap = Math.max(170, longest * CHAR + 50);
  const rows = Math.max(...cols.map((c) => c.length));
  const pos = new Map();
  cols.forEach((col, i) => {
    const top = PAD + R + ((rows - col.length) * ROW) / 2;
    col.forEach((n, j) => pos.set(n, { x: PAD + (longest * CHAR) / 2 + i * colGap, y: top + j * ROW }));
  });
  const width = 2 * PAD + longest * CHAR + (cols.length - 1) * colGap;
  const height = 2 * PAD + 2 * R + (rows - 1) * ROW + 16;
  root.setAttribute("viewBox", `0 0 ${width} ${height}`);
  root.style.maxWidth = width + "px";

  // Two arrowheads: a marker cannot take its line's colour everywhere yet.
  const defs = svg("defs");
  for (const id of ["arrow", "arrow-support"]) {
    const marker = svg("marker", { id, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" });
    marker.append(svg("path", { d: "M0,0 L10,5 L0,10 z" }));
    defs.append(marker);
  }
  root.append(defs);

  // Edges between the same two entities bend apart so each stays readable.
  const pairs = new Map();
  const pairKey = (m) => [m.triple[0], m.triple[2]].sort().join("\u0000");
  for (const m of edges) pairs.set(pairKey(m), (pairs.get(pairKey(m)) || 0) + 1);
  const seen = new Map();
  const edgeLayer = svg("g", { class: "edges" });
  for (const m of edges) {
    const [h, rel, t] = m.triple;
    const k = pairKey(m);
    const i = seen.get(k) || 0;
    seen.set(k, i + 1);
    const g = svg("g", { class: "edge", "data-head": h, "data-rel": rel, "data-tail": t });
    // Edges an answer's chain walks stand out from the rest of the evidence.
    const onChain = support.has(m.triple.join("\u0000"));
    if (onChain) g.dataset.support = "true";
    g.append(svg("title", {}, `${rel}  T-Score ${m.t_score.toFixed(3)} (bias ${m.bias.toFixed(2)})`));
    const { d, lx, ly, anchor } = edgePath(pos.get(h), pos.get(t), i, pairs.get(k), h > t, longest * CHAR);
    const opacity = 0.35 + 0.65 * Math.min(1, Math.max(0, m.t_score));
    g.append(svg("path", { d, "marker-end": onChain ? "url(#arrow-support)" : "url(#arrow)", "stroke-opacity": opacity.toFixed(2) }));
    g.append(svg("text", { x: lx, y: ly, "text-anchor": anchor, class: "rel" }, rel));
    edgeLayer.append(g);
  }
  root.append(edgeLayer);

  const isAnswer = new Set(answers);
  const isAnchor = new Set(anchors);
  const nodeLayer = svg("g", { class: "nodes" });
  for (const col of cols) {
    for (const n of col) {
      const p = pos.get(n);
      const cls = ["node"];
      if (isAnchor.has(n)) cls.push("anchor");
      if (isAnswer.has(n)) cls.push("answer");
      const g = svg("g", { class: cls.join(" "), "data-name": n });
      const role = cls.slice(1).join(", ");
      g.append(svg("title", {}, role ? `${n} (${role})` : n));
      g.append(svg("circle", { cx: p.x, cy: p.y, r: R }));
      g.append(svg("text", { x: p.x, y: p.y + R + 14, "text-anchor": "middle" }, n));
      nodeLayer.append(g);
    }
  }
  root.append(nodeLayer);
}

// edgePath draws the i-th of n edges between two nodes, as a quadratic
// curve stopping at the nodes' rims, and returns where its label goes.
// flip keeps the bend's side the same whichever way an edge points;
// label is the widest node label.
function edgePath(a, b, i, n, flip, label) {
  if (a === b) { // a loop on one node
    const d = `M${a.x - R / 2},${a.y - R} C${a.x - 28},${a.y - 52} ${a.x + 28},${a.y - 52} ${a.x + R / 2},${a.y - R}`;
    return { d, lx: a.x, ly: a.y - 46, anchor: "middle" };
  }
  const dx = b.x - a.x, dy = b.y - a.y;
  const len = Math.hypot(dx, dy);
  const column = Math.abs(dx) < 1;
  let off = (i - (n - 1) / 2) * 44;
  if (flip) off = -off;
  if (column) {
    // Nodes of one column line up, labels under them: bow out to the
    // right, clear of the labels and of the nodes between. A quadratic
    // curve reaches half way to its control point.
    off = (label + 24 + i * 40) * (dy > 0 ? -1 : 1);
  }
  const mx = (a.x + b.x) / 2, my = (a.y + b.y) / 2;
  const cx = mx - (dy / len) * off, cy = my + (dx / len) * off;
  const rim = (p, q) => {
    const l = Math.hypot(q.x - p.x, q.y - p.y) || 1;
    return { x: p.x + ((q.x - p.x) / l) * (R + 1), y: p.y + ((q.y - p.y) / l) * (R + 1) };
  };
  const c = { x: cx, y: cy };
  const s = rim(a, c), e = rim(b, c);
  const f = (v) => v.toFixed(1);
  return {
    d: `M${f(s.x)},${f(s.y)} Q${f(cx)},${f(cy)} ${f(e.x)},${f(e.y)}`,
    // The curve's midpoint, lifted a little so the label sits on the
    // line; a bow's label starts beside it, clear of the next column.
    lx: f(0.25 * s.x + 0.5 * cx + 0.25 * e.x + (column ? 4 : 0)),
    ly: f(0.25 * s.y + 0.5 * cy + 0.25 * e.y + (column ? 4 : -4)),
    anchor: column ? "start" : "middle",
  };
}

function init() {
  const form = $("ask");
  const q = $("question");
  const token = $("token");
  token.value = loadToken();
  if (token.value) $("auth").hidden = false;
  token.addEventListener("change", () => saveToken(token.value.trim()));
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const question = q.value.trim();
    if (!question) return;
    saveToken(token.value.trim());
    // The address bar always holds a link to what is shown.
    const url = new URL(location.href);
    url.searchParams.set("q", question);
    history.replaceState(null, "", url);
    ask(question);
  });
  // A shared link /?q=... asks as a user would.
  const shared = new URLSearchParams(location.search).get("q");
  if (shared) {
    q.value = shared;
    form.requestSubmit();
  }
}

init();
