"use strict";
// Polls the JSON API (the same routes any client uses) once a second; no reload needed.
const POLL_MS = 1000;
let token = "";

function fromFragment() {
  const m = /(?:^|[#&])token=([^&]+)/.exec(location.hash);
  if (m) { history.replaceState(null, "", location.pathname + location.search); return decodeURIComponent(m[1]); }
  return null;
}

async function api(method, path) {
  const r = await fetch(path, { method, headers: { "Authorization": "Bearer " + token } });
  const body = await r.json().catch(() => null);
  if (!r.ok) { const e = new Error((body && body.error && body.error.message) || r.statusText); e.status = r.status; throw e; }
  return body;
}

function cell(row, text, cls) {
  const td = row.insertCell(); td.textContent = text == null ? "" : String(text); if (cls) td.className = cls; return td;
}

function fill(table, items, render) {
  const body = document.querySelector(table + " tbody");
  body.replaceChildren();
  if (!items.length) { const r = body.insertRow(); const td = cell(r, "none", "muted"); td.colSpan = 9; }
  for (const item of items) render(body.insertRow(), item);
}

function statusText(job) {
  return job.status === "queued" ? "queued #" + job.position : job.status;
}

function renderJob(row, job) {
  row.id = "job-" + job.id; row.dataset.status = job.status;
  cell(row, job.id + (job.delta_of ? " (re-check of " + job.delta_of + ")" : ""));
  cell(row, job.thesis_filename);
  cell(row, statusText(job), "status status-" + job.status);
  const p = cell(row, "");
  if (job.progress && job.progress.total) {
    const bar = document.createElement("span"); bar.className = "bar";
    const fillEl = document.createElement("span"); fillEl.style.width = (100 * job.progress.judged / job.progress.total) + "%";
    bar.append(fillEl); p.append(bar, " " + job.progress.judged + "/" + job.progress.total);
  }
  cell(row, Object.entries(job.verdict_counts || {}).map(([k, n]) => n + " " + k.replace("_", " ")).join(", ")
            || (job.error ? job.error : ""));
  const actions = cell(row, "");
  if (job.status === "queued" || job.status === "pending") {
    const b = document.createElement("button"); b.textContent = "Cancel"; b.className = "cancel";
    b.onclick = () => act("POST", "/api/analyses/" + job.id + "/cancel"); actions.append(b);
  }
}

function renderDead(row, d) {
  row.id = "dead-" + d.id;
  cell(row, d.id); cell(row, d.queue_name); cell(row, d.actor_name); cell(row, d.attempts); cell(row, d.reason);
  const b = document.createElement("button"); b.textContent = "Retry"; b.className = "retry";
  b.onclick = () => act("POST", "/api/ops/dead-letters/" + d.id + "/retry");
  row.insertCell().append(b);
}

async function act(method, path) {
  try { await api(method, path); await refresh(); } catch (e) { showError(e); }
}

function showError(e) { document.getElementById("error").textContent = e ? e.message : ""; }

let isUser = true, isOps = true;

async function refresh() {
  if (!token) return;
  const tasks = [];
  if (isUser) tasks.push(api("GET", "/api/analyses").then(jobs => {
    document.getElementById("user-view").hidden = false;
    fill("#jobs", jobs, renderJob);
  }).catch(e => { if (e.status === 403) { isUser = false; document.getElementById("user-view").hidden = true; } else throw e; }));
  if (isOps) tasks.push(Promise.all([api("GET", "/api/ops/queues"), api("GET", "/api/ops/workers"),
                                     api("GET", "/api/ops/dead-letters")]).then(([queues, workers, dead]) => {
    document.getElementById("ops-view").hidden = false;
    fill("#queues", queues, (r, q) => { cell(r, q.queue_name); cell(r, q.ready); cell(r, q.delayed); cell(r, q.running);
                                        cell(r, q.dead); cell(r, q.oldest_age_seconds.toFixed(1) + " s"); });
    fill("#workers", workers, (r, w) => { cell(r, w.hostname + ":" + w.pid); cell(r, w.queues.join(", "));
                                          cell(r, w.seconds_since_seen.toFixed(1) + " s ago"); });
    fill("#dead-letters", dead, renderDead);
  }).catch(e => { if (e.status === 403) { isOps = false; document.getElementById("ops-view").hidden = true; } else throw e; }));
  try { await Promise.all(tasks); showError(null); document.body.dataset.refreshed = String(Date.now()); }
  catch (e) { showError(e); }
}

function useToken(t) {
  token = t; isUser = isOps = true;
  sessionStorage.setItem("citeq-token", t);
  api("GET", "/api/me").then(me => { document.getElementById("who").textContent = "signed in as " + (me.name || me.user_id) + ", " + me.credits + " credits"; })
    .catch(e => { document.getElementById("who").textContent = e.status === 403 ? "operator" : ""; if (e.status === 401) showError(e); });
  refresh();
}

document.getElementById("login").addEventListener("submit", ev => {
  ev.preventDefault(); useToken(document.getElementById("token").value.trim());
});
const initial = fromFragment() || sessionStorage.getItem("citeq-token");
if (initial) useToken(initial);
setInterval(refresh, POLL_MS);
