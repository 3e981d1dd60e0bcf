"""The report page's script: it decodes the packed index once (gzip via the browser's DecompressionStream),
fills the filters, shows the table a page at a time, and decodes a detail chunk only when one of its
trajectories is opened. ``#t=N`` in the address opens trajectory N (a link one can share)."""

SCRIPT = r"""
"use strict";
const PAGE = 100;
const $ = (id) => document.getElementById(id);
const esc = (s) => String(s ?? "").replace(/[&<>"']/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"})[c]);
const num = (v, d = 2) => (v === null || v === undefined ? "–" : Number(v).toFixed(d));
const json = (v) => esc(JSON.stringify(v, null, 2));
const chunks = new Map();
let INDEX = null, ROWS = [], VIEW = [], page = 0, sortKey = null, sortDir = 1;

async function decode(id) {
  const text = $(id).textContent;
  const bytes = Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return JSON.parse(await new Response(stream).text());
}

function chunk(i) {
  if (!chunks.has(i)) chunks.set(i, decode("chunk-" + i));
  return chunks.get(i);
}

function buildRows(index) {
  const c = index.columns, n = c.agent.length, rows = new Array(n);
  for (let i = 0; i < n; i++) {
    const t = index.tasks[c.task[i]];
    rows[i] = {
      i, agent: c.agent[i], task: t[0], scenario: t[1], difficulty: t[2], safetyTask: t[3], request: t[4],
      trial: c.trial[i], status: index.statuses[c.status[i]], score: c.score[i], completion: c.completion[i],
      safety: c.safety[i], passed: c.passed[i], tokens: c.tokens_in[i] + c.tokens_out[i], wall: c.wall_s[i],
      calls: c.tool_calls[i], turns: c.turns[i], chunk: c.chunk[i], slot: c.slot[i],
    };
  }
  return rows;
}

function fillSelect(id, values) {
  const sel = $(id);
  for (const [value, label] of values) {
    const o = document.createElement("option");
    o.value = value; o.textContent = label; sel.appendChild(o);
  }
  sel.addEventListener("change", () => { page = 0; apply(); });
}

const COLUMNS = [
  ["task", "task"], ["agent", "agent"], ["trial", "trial", "n"], ["scenario", "scenario"],
  ["difficulty", "difficulty"], ["status", "status"], ["score", "score", "n"], ["passed", "passed"],
  ["calls", "tool calls", "n"], ["tokens", "tokens", "n"], ["wall", "seconds", "n"],
];

function outcome(r) {
  if (r.status !== "completed") return "incomplete";
  if (r.safety === 0) return "unsafe";
  return r.passed ? "passed" : "failed";
}

function apply() {
  const a = $("f-agent").value, s = $("f-scenario").value, d = $("f-difficulty").value;
  const o = $("f-outcome").value, q = $("f-text").value.trim().toLowerCase();
  VIEW = ROWS.filter((r) =>
    (a === "" || r.agent === +a) && (s === "" || r.scenario === s) && (d === "" || r.difficulty === d) &&
    (o === "" || (o === "failed" ? !r.passed : outcome(r) === o)) &&
    (q === "" || r.task.toLowerCase().includes(q) || r.request.toLowerCase().includes(q)));
  if (sortKey) {
    VIEW.sort((x, y) => {
      const u = sortKey === "agent" ? INDEX.agents[x.agent] : x[sortKey];
      const v = sortKey === "agent" ? INDEX.agents[y.agent] : y[sortKey];
      return (u === v ? x.i - y.i : (u ?? -1) < (v ?? -1) ? -1 : 1) * sortDir;
    });
  }
  $("count").textContent = `${VIEW.length.toLocaleString()} of ${ROWS.length.toLocaleString()} trajectories`;
  render();
}

function render() {
  const pages = Math.max(1, Math.ceil(VIEW.length / PAGE));
  page = Math.min(page, pages - 1);
  const rows = VIEW.slice(page * PAGE, (page + 1) * PAGE);
  $("table").tBodies[0].innerHTML = rows.map((r) => `<tr data-i="${r.i}">` +
    `<td>${esc(r.task)}</td><td>${esc(INDEX.agents[r.agent])}</td><td class="n">${r.trial}</td>` +
    `<td>${esc(r.scenario)}</td><td>${esc(r.difficulty)}</td><td>${esc(r.status)}</td>` +
    `<td class="n">${num(r.score)}</td><td class="${r.passed ? "pass" : "fail"}">${r.passed ? "yes" : "no"}` +
    `${r.safety === 0 ? " (unsafe)" : ""}</td><td class="n">${r.calls}</td>` +
    `<td class="n">${r.tokens.toLocaleString()}</td><td class="n">${num(r.wall)}</td></tr>`).join("");
  $("pager").innerHTML = `<button id="prev" ${page ? "" : "disabled"}>‹ previous</button>` +
    `<span>page ${page + 1} of ${pages}</span><button id="next" ${page + 1 < pages ? "" : "disabled"}>next ›</button>`;
  $("prev").onclick = () => { page--; render(); };
  $("next").onclick = () => { page++; render(); };
}

function head() {
  $("table").tHead.innerHTML = "<tr>" + COLUMNS.map(([k, label, cls]) =>
    `<th data-k="${k}" class="${cls || ""}">${label}${sortKey === k ? (sortDir > 0 ? " ▲" : " ▼") : ""}</th>`).join("") + "</tr>";
}

function stepsByCall(d) {
  const m = new Map();
  for (const s of d.steps || []) m.set(s.call_id, s);
  return m;
}

function callHtml(call, step) {
  let out = `<div class="call"><div><b>${esc(call.name)}</b></div><pre>${json(call.arguments || {})}</pre>`;
  if (step) {
    const cls = step.is_error ? "fail" : "pass";
    out += `<div class="meta"><span class="${cls}">${esc(step.outcome)}</span> · at ${num(step.started_s)} s · ` +
      `${num(step.duration_ms)} ms${step.anchor ? " · state " + esc(step.anchor.slice(0, 12)) : ""}</div>` +
      `<details ${step.text.length < 600 ? "open" : ""}><summary>result (${step.text.length.toLocaleString()} chars)` +
      `</summary><pre>${esc(step.text)}</pre></details>`;
  }
  return out + "</div>";
}

function eventHtml(e) {
  if (e.kind === "edit") {
    return `<div class="msg edit"><div class="who">user edits the workspace · ${esc(e.name)}` +
      `${e.is_error ? ' <span class="fail">failed</span>' : ""}</div><pre>${json(e.arguments)}</pre>` +
      (e.text ? `<pre>${esc(e.text)}</pre>` : "") + "</div>";
  }
  return `<div class="msg user"><div class="who">user ends the conversation</div>${e.text ? `<pre>${esc(e.text)}</pre>` : ""}</div>`;
}

function conversation(d, prompt) {
  const steps = stepsByCall(d), turns = d.turns || [];
  const events = (d.user_events || []).filter((e) => e.kind !== "reply");
  const parts = [];
  if (prompt !== undefined) parts.push(`<details class="msg system"><summary class="who">system prompt</summary><pre>${esc(prompt)}</pre></details>`);
  let turn = 0, users = 0;
  const eventsAt = (k) => events.filter((e) => e.turn === k).forEach((e) => parts.push(eventHtml(e)));
  eventsAt(0);
  for (const m of d.messages) {
    if (m.role === "assistant") {
      const t = turns[turn];
      const meta = t ? ` · turn ${turn} · at ${num(t.started_s)} s · ${num(t.duration_s)} s · tokens in ${t.usage.input_tokens}` +
        ` / out ${t.usage.output_tokens}${t.stop_reason ? " · " + esc(t.stop_reason) : ""}` : "";
      parts.push(`<div class="msg assistant"><div class="who">assistant${meta}</div>` +
        (m.content ? `<pre>${esc(m.content)}</pre>` : "") +
        (m.tool_calls || []).map((c) => callHtml(c, steps.get(c.id))).join("") + "</div>");
      turn++;
      eventsAt(turn);
    } else if (m.role === "user") {
      parts.push(`<div class="msg user"><div class="who">${users++ ? "user (simulator)" : "user request"}</div><pre>${esc(m.content)}</pre></div>`);
    } else if (m.role === "tool" && !m.from_step) {
      parts.push(`<div class="msg tool ${m.is_error ? "err" : ""}"><div class="who">tool result ${esc(m.name || "")}</div><pre>${esc(m.content)}</pre></div>`);
    }
  }
  return parts.join("");
}

function gradeHtml(g, d) {
  if (!g) return `<p class="muted">Not graded (${esc(d.status)}).</p>`;
  let out = `<p>score <b>${num(g.score)}</b> = safety ${num(g.safety, 0)} × completion ${num(g.completion)}` +
    `${g.penalty ? ` (after −${num(g.penalty)} for unexplained changes)` : ""} · <span class="${g.passed ? "pass" : "fail"}">` +
    `${g.passed ? "passed" : "not passed"}</span></p>` +
    (g.external ? `<p class="meta">${esc(g.external.kind)}: score = safety × (0.8·completion + 0.2·robustness ` +
      `${num(g.robustness)}); graded by ${esc(g.external.graded_by || "")}</p>` : "") +
    ((g.not_judged || []).length ? `<p class="fail">not judged (left out of scores):</p><ul>` +
      g.not_judged.map((n) => `<li>${esc(n)}</li>`).join("") + "</ul>" : "") +
    `<h4>Checks</h4><table><tr><th>check</th><th class="n">weight</th>` +
    "<th>result</th><th>description</th><th>expected / found</th></tr>";
  for (const c of g.checks) {
    out += `<tr><td>${esc(c.id)}<div class="muted">${esc(c.kind)}</div></td><td class="n">${c.weight}</td>` +
      `<td class="${c.passed ? "pass" : "fail"}">${c.passed ? "pass" : "fail"}</td><td>${esc(c.description)}</td>` +
      `<td><div>expected ${esc(c.expected)}</div><div>found ${esc(c.found)}</div>` +
      `${c.blocked_by && c.blocked_by.length ? `<div class="fail">blocked by ${esc(c.blocked_by.join(", "))}</div>` : ""}</td></tr>`;
  }
  out += "</table><h4>Forbidden actions</h4>";
  out += g.forbidden.length ? "<table><tr><th>id</th><th>result</th><th>description</th><th>found</th></tr>" +
    g.forbidden.map((f) => `<tr><td>${esc(f.id)}</td><td class="${f.triggered ? "fail" : "pass"}">${f.triggered ? "TRIPPED" : "ok"}</td>` +
      `<td>${esc(f.description)}</td><td>${esc(f.found)}</td></tr>`).join("") + "</table>" : '<p class="muted">none declared</p>';
  out += "<h4>State diff: changes nothing in the task explains</h4>";
  out += (g.unexplained || []).length ? "<table><tr><th>change</th><th>fields (old → new)</th><th>sensitive</th></tr>" +
    g.unexplained.map((u) => `<tr><td>${esc(u.op)} ${esc(u.service)}.${esc(u.table)} ${esc(u.id)}</td><td>` +
      u.fields.map((f) => `<div><b>${esc(f.field)}</b>: ${esc(f.old)} → ${esc(f.new)}</div>`).join("") +
      `</td><td class="${u.sensitive.length ? "fail" : ""}">${esc(u.sensitive.join(", ") || "–")}</td></tr>`).join("") + "</table>"
    : '<p class="muted">none: every change is one the task expects or allows</p>';
  out += `<p class="meta">state hash ${esc((d.initial_state_hash || "–").slice(0, 16))} → ${esc((d.final_state_hash || "–").slice(0, 16))}</p>`;
  return out;
}

async function open(i) {
  const r = ROWS[i];
  if (!r) return;
  const v = $("viewer");
  v.classList.add("open");
  v.innerHTML = '<p class="muted">decoding…</p>';
  const d = (await chunk(r.chunk))[r.slot];
  const u = d.usage || {};
  v.innerHTML = `<button class="close" title="close (Esc)">✕</button><h2 id="v-title">${esc(d.task_id)} · trial ${d.trial}</h2>` +
    `<p class="meta">agent ${esc(INDEX.agents[r.agent])} · ${esc(d.scenario)} · ${esc(d.difficulty)}${d.safety ? " · safety task" : ""} · ` +
    `status <b>${esc(d.status)}</b>${d.stop_reason ? " (" + esc(d.stop_reason) + ")" : ""} · ${num(d.wall_s)} s · ` +
    `tokens in ${u.input_tokens ?? 0} / out ${u.output_tokens ?? 0} / cache read ${u.cache_read_tokens ?? 0} · ` +
    `${(d.steps || []).length} tool calls · ${(d.turns || []).length} turns · attempts ${d.attempts} · started ${esc(d.started_at)}</p>` +
    (d.error ? `<pre class="fail">${esc(d.error)}</pre>` : "") +
    (d.attempt_errors && d.attempt_errors.length ? `<details><summary>errors of retried attempts</summary><pre>${esc(d.attempt_errors.join("\n"))}</pre></details>` : "") +
    `<h3>Request</h3><pre>${esc(d.request)}</pre><h3>Grade</h3>${gradeHtml(d.grade, d)}` +
    `<h3>Conversation</h3>${conversation(d, d.system === undefined ? undefined : INDEX.prompts[d.system])}` +
    (d.said && d.said.length ? `<h3>What the agent told the user</h3>${d.said.map((s) => `<pre>${esc(s)}</pre>`).join("")}` : "");
  v.querySelector(".close").onclick = close;
  v.scrollTop = 0;
  if (location.hash !== "#t=" + i) history.replaceState(null, "", "#t=" + i);
}

function close() {
  $("viewer").classList.remove("open");
  history.replaceState(null, "", location.pathname + location.search);
}

async function main() {
  if (typeof DecompressionStream === "undefined") {
    $("count").textContent = "This browser cannot decompress the report's data (it needs DecompressionStream).";
    return;
  }
  INDEX = await decode("index");
  ROWS = buildRows(INDEX);
  fillSelect("f-agent", INDEX.agents.map((a, i) => [String(i), a]));
  fillSelect("f-scenario", [...new Set(INDEX.tasks.map((t) => t[1]))].sort().map((s) => [s, s]));
  fillSelect("f-difficulty", [...new Set(INDEX.tasks.map((t) => t[2]))].sort().map((s) => [s, s]));
  fillSelect("f-outcome", []);
  $("f-text").addEventListener("input", () => { page = 0; apply(); });
  $("table").tHead.addEventListener("click", (e) => {
    const k = e.target.closest("th")?.dataset.k;
    if (!k) return;
    sortDir = sortKey === k ? -sortDir : 1; sortKey = k; head(); apply();
  });
  $("table").tBodies[0].addEventListener("click", (e) => {
    const tr = e.target.closest("tr");
    if (tr) open(+tr.dataset.i);
  });
  document.addEventListener("keydown", (e) => { if (e.key === "Escape") close(); });
  head();
  apply();
  const m = location.hash.match(/^#t=(\d+)$/);
  if (m) await open(+m[1]);
  document.body.dataset.ready = String(Math.round(performance.now()));
}

main().catch((e) => { $("count").textContent = "The report could not be read: " + e; throw e; });
"""
