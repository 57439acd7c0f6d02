"use strict";
// Polls the JSON API (the same routes any client uses) once a second; no reload needed.
//
// Errors stay put: each control has its own error line beside it (login, cancel, upload,
// start, download, operator actions) that only that control's next use clears. The poll
// never touches them; it has its own line for "cannot reach the server", cleared when a
// poll succeeds again.
const POLL_MS = 1000;
let token = "";

const $ = id => document.getElementById(id);

function fromFragment() {
  const m = /(?:^|[#&])token=([^&]+)/.exec(location.hash);
  if (m) { history.replaceState(null, "", location.pathname + location.search); return decodeURIComponent(m[1]); }
  return null;
}

// Error codes of the API as sentences a person can act on; other errors keep the server's message.
const SENTENCES = {
  unauthorized: "This token was not accepted: it may be mistyped, expired or revoked. Paste a valid token, " +
                "or ask an operator for a new one (citeq users token NAME).",
  insufficient_credits: "Your account has fewer credits than the analysis costs. Ask an operator for more credits.",
  rate_limited: "Too many requests in a short time. Wait a moment and try again.",
};

// body: FormData (multipart; the browser sets its type and length) or an object sent as JSON.
async function api(method, path, body) {
  const headers = { "Authorization": "Bearer " + token };
  let payload = body;
  if (body !== undefined && !(body instanceof FormData)) { headers["Content-Type"] = "application/json"; payload = JSON.stringify(body); }
  let r;
  try { r = await fetch(path, { method, headers, body: payload }); }
  catch (_) { const e = new Error("The server cannot be reached. The page keeps trying every second."); e.status = 0; throw e; }
  const answer = await r.json().catch(() => null);
  if (!r.ok) {
    const err = (answer && answer.error) || {};
    const e = new Error(SENTENCES[err.code] || err.message || r.statusText);
    e.status = r.status; e.code = err.code;
    throw e;
  }
  return answer;
}

function say(id, e) { $(id).textContent = e ? (e.message || String(e)) : ""; }

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text != null) e.textContent = String(text);
  if (cls) e.className = cls;
  return e;
}

function button(text, cls, onclick) {
  const b = el("button", text, cls); b.type = "button"; b.onclick = onclick; return b;
}

function cell(row, text, cls) {
  const td = row.insertCell(); td.textContent = text == null ? "" : String(text); if (cls) td.className = cls; return td;
}

// Re-renders only the rows whose data changed (a row re-rendered under the pointer swallows a
// click on its button), and labels each cell with its column for the stacked layout on narrow
// screens. Rows a render adds after its own (a traceback) are marked data-companion.
const rendered = {};
function fill(table, items, render, empty, keyOf) {
  const keys = items.map(i => JSON.stringify(keyOf ? keyOf(i) : i));
  const whole = JSON.stringify(keys);
  if (rendered[table] === whole) return;
  const t = document.querySelector(table);
  const labels = [...t.tHead.rows[0].cells].map(c => c.textContent);
  const body = t.tBodies[0];
  const draw = (row, item, key) => {
    row.dataset.key = key;
    render(row, item);
    [...row.cells].forEach((c, i) => { if (labels[i] && !c.dataset.label) c.dataset.label = labels[i]; });
  };
  const rows = [...body.rows].filter(r => !r.dataset.companion);
  const samePlaces = rendered[table] !== undefined && items.length && rows.length === items.length &&
    rows.every(r => r.dataset.key !== undefined);
  rendered[table] = whole;
  if (samePlaces) {
    items.forEach((item, i) => {
      const old = rows[i];
      if (old.dataset.key === keys[i]) return;
      while (old.nextElementSibling && old.nextElementSibling.dataset.companion) old.nextElementSibling.remove();
      const fresh = document.createElement("tr");
      old.replaceWith(fresh);
      draw(fresh, item, keys[i]);
    });
    return;
  }
  body.replaceChildren();
  if (!items.length) { const r = body.insertRow(); const td = cell(r, empty || "none", "muted wide"); td.colSpan = labels.length; }
  items.forEach((item, i) => draw(body.insertRow(), item, keys[i]));
}

function ordinal(n) {
  const s = ["th", "st", "nd", "rd"], v = n % 100;
  return n + (s[(v - 20) % 10] || s[v] || s[0]);
}

function when(iso) { return iso ? new Date(iso).toLocaleString() : "—"; }
function ago(seconds) { return seconds == null ? "—" : seconds < 90 ? seconds.toFixed(0) + " s" : (seconds / 60).toFixed(0) + " min"; }

// -- verdicts: one order, one colour, one label, one sentence everywhere -----------------------

const VERDICTS = ["not_supported", "partially_supported", "uncertain", "source_missing", "supported", "pending"];
const ATTENTION = ["not_supported", "partially_supported", "uncertain", "source_missing"];
const LABELS = { not_supported: "not supported", partially_supported: "partially supported", uncertain: "uncertain",
                 source_missing: "source missing", supported: "supported", pending: "not checked yet" };

function badge(verdict, text, tag) {
  const b = el(tag || "span", text == null ? LABELS[verdict] : text, "badge v-" + verdict);
  if (tag === "button") b.type = "button";
  return b;
}

// Verdict counts as coloured badges in the fixed order; zero counts are left out.
function countBadges(counts, onpick) {
  return VERDICTS.filter(v => counts && counts[v]).map(v => {
    const b = badge(v, counts[v] + " " + LABELS[v], onpick ? "button" : "span");
    b.dataset.verdict = v;
    if (onpick) b.onclick = () => onpick(v);
    return b;
  });
}

function statusText(job) {
  if (job.status === "queued") return ordinal(job.position) + " in your queue";
  if (job.status === "pending") return "waiting for a worker";
  return job.status;
}

// -- sign-in -----------------------------------------------------------------------------------

let isUser = false, isOps = false, refused = false;
let account = null;

function showViews() {
  $("welcome").hidden = !!token && !refused;
  $("user-view").hidden = !isUser || refused || report.job !== null;
  $("report-view").hidden = !isUser || refused || report.job === null;
  $("ops-view").hidden = !isOps || refused;
}

function refuse(e) {
  refused = true; isUser = isOps = false; account = null;
  sessionStorage.removeItem("citeq-token");
  $("who").textContent = "";
  say("login-error", e);
  showViews();
}

async function useToken(t) {
  token = t; refused = false; isUser = isOps = false; account = null;
  for (const k of Object.keys(rendered)) delete rendered[k];
  say("login-error", null); closeReport();
  // Both views are asked for at once; what answers is shown at once (the operator view
  // from this first answer, not one poll later).
  const [me, overview] = await Promise.allSettled([api("GET", "/api/me"), api("GET", "/api/ops/overview")]);
  if (token !== t) return;  // another token was given meanwhile
  const failed = [me, overview].filter(r => r.status === "rejected").map(r => r.reason);
  const refusal = failed.find(e => e.status === 401);
  if (refusal) { refuse(refusal); return; }
  const other = failed.find(e => e.status !== 403);
  if (other) { say("login-error", other); return; }
  if (me.status === "fulfilled") { account = me.value; isUser = true; }
  if (overview.status === "fulfilled") { isOps = true; renderOverview(overview.value); }
  if (!isUser && !isOps) { refuse(new Error("This token reaches neither a user's analyses nor the operator view.")); return; }
  sessionStorage.setItem("citeq-token", t);
  showViews(); renderAccount();
  await refresh();
}

function renderAccount() {
  if (!account) { $("who").textContent = isOps ? "signed in as an operator" : ""; return; }
  $("who").textContent = "signed in as " + (account.name || "user " + account.user_id) + (isOps ? " (operator)" : "");
  const cost = account.analysis_cost;
  $("account").textContent = account.credits + " credit" + (account.credits === 1 ? "" : "s") + " left" +
    (cost == null ? "" : "; an analysis costs " + cost + " credit" + (cost === 1 ? "" : "s"));
  $("cost-note").textContent = cost == null ? "" : "Costs " + cost + " credit" + (cost === 1 ? "" : "s") + " (you have " + account.credits + ").";
}

// -- the poll ----------------------------------------------------------------------------------

let lastJobs = [];

async function refresh() {
  if (!token || refused) return;
  const tasks = [];
  if (isUser) {
    tasks.push(api("GET", "/api/me").then(me => { account = me; renderAccount(); }));
    tasks.push(api("GET", "/api/analyses").then(jobs => { lastJobs = jobs; fill("#jobs", jobs, renderJob, "no analyses yet"); }));
    tasks.push(pollUploads(), pollReport());
  }
  if (isOps) tasks.push(api("GET", "/api/ops/overview").then(renderOverview));
  if (isOps) tasks.push(pollGroups());
  try {
    await Promise.all(tasks);
    say("refresh-error", null); document.body.dataset.refreshed = String(Date.now());
  } catch (e) {
    if (e.status === 401) refuse(e); else say("refresh-error", e);
  }
  showViews();
}

function renderJob(row, job) {
  row.id = "job-" + job.id; row.dataset.status = job.status;
  const first = cell(row, "");
  const open = button(String(job.id), "link open-report", () => openReport(job.id));
  open.title = "open the report of job " + job.id;
  first.append(open, job.delta_of ? " (re-check of " + job.delta_of + ")" : "");
  cell(row, job.thesis_filename);
  cell(row, statusText(job), "status status-" + job.status);
  const p = cell(row, "");
  if (job.progress && job.progress.total) {
    const bar = el("span", null, "bar");
    const fillEl = el("span"); fillEl.style.width = (100 * job.progress.judged / job.progress.total) + "%";
    bar.append(fillEl); p.append(bar, " " + job.progress.judged + "/" + job.progress.total);
  }
  const verdicts = cell(row, "", "counts");
  verdicts.append(...countBadges(job.verdict_counts));
  if (job.error) verdicts.append(el("span", job.error, "muted"));
  const actions = cell(row, "", "actions");
  if (job.status === "queued" || job.status === "pending") {
    actions.append(button("Cancel", "cancel", async () => {
      say("jobs-error", null);
      try { await api("POST", "/api/analyses/" + job.id + "/cancel"); await refresh(); }
      catch (e) { say("jobs-error", new Error("Job " + job.id + " was not canceled: " + e.message)); }
    }));
  }
}

// -- the operator view -------------------------------------------------------------------------

const ops = { tracebacks: new Set(), dead: [] };

function renderOverview(o) {
  const stalled = o.queues.filter(q => q.stalled);
  const banner = $("stall-banner");
  banner.hidden = !stalled.length;
  banner.textContent = stalled.map(q => "Work is waiting and no worker runs it: queue " + q.queue_name + " has " + q.ready +
    " ready message" + (q.ready === 1 ? "" : "s") + " and no live worker consumes it.").join(" ") +
    (stalled.length ? " Start a worker (citeq worker, or the Procfile's worker process)." : "");
  banner.dataset.queues = stalled.map(q => q.queue_name).join(",");
  const paused = o.queues.filter(q => q.paused);
  $("pause-banner").hidden = !paused.length;
  $("pause-banner").textContent = paused.length ? "Paused: " + paused.map(q => q.queue_name).join(", ") +
    ". Workers claim nothing from a paused queue until it is resumed." : "";

  // The age of the oldest ready message changes every second: it is written into its cell,
  // not re-rendered with the row (a row re-rendered under the pointer swallows a click on Pause).
  fill("#queues", o.queues, renderQueue, null, q => ({ ...q, oldest_age_seconds: null }));
  for (const q of o.queues) {
    const c = document.querySelector("#queue-" + CSS.escape(q.queue_name) + " .oldest");
    if (c) c.textContent = q.ready ? ago(q.oldest_age_seconds) : "—";
  }
  fill("#workers", o.workers, renderWorker, "no live worker");
  fill("#running", o.analyses, renderRunning, "no analysis running or waiting");
  ops.dead = o.dead_letters;
  fill("#dead-letters", o.dead_letters, renderDead, "no dead letters");
  $("retry-all").disabled = $("purge-all").disabled = !o.dead_letters.length;
}

function renderQueue(row, q) {
  row.id = "queue-" + q.queue_name; row.dataset.paused = String(q.paused); row.dataset.stalled = String(q.stalled);
  row.className = q.stalled ? "stalled" : q.paused ? "paused" : "";
  cell(row, q.queue_name);
  const state = q.stalled ? "no worker" : q.paused ? "paused" : q.consumers ? q.consumers + " worker" + (q.consumers === 1 ? "" : "s") : "idle, no worker";
  cell(row, state, "state " + (q.stalled ? "state-stalled" : q.paused ? "state-paused" : ""));
  cell(row, q.ready); cell(row, q.delayed); cell(row, q.running); cell(row, q.dead);
  cell(row, q.processed_last_hour, "processed"); cell(row, q.failed_last_hour, "failed");
  cell(row, when(q.last_failed_at)); cell(row, q.ready ? ago(q.oldest_age_seconds) : "—", "oldest");
  const actions = cell(row, "", "actions");
  const verb = q.paused ? "resume" : "pause";
  actions.append(button(q.paused ? "Resume" : "Pause", verb, () => queueAction(q.queue_name, verb)));
}

async function queueAction(name, verb) {
  say("queue-result", null);
  try {
    const q = await api("POST", "/api/ops/queues/" + encodeURIComponent(name) + "/" + verb);
    say("queue-result", new Error(q.paused
      ? "Queue " + name + " is paused: workers claim nothing from it until you resume it. Messages already running finish."
      : "Queue " + name + " is running again: workers claim its messages."));
    $("queue-result").className = "result";
    await refresh();
  } catch (e) { $("queue-result").className = "error"; say("queue-result", new Error("Queue " + name + " was not " + (verb === "pause" ? "paused" : "resumed") + ": " + e.message)); }
}

// Busy threads are the messages a process holds, at most its threads; what it holds beyond
// them was prefetched and waits for a thread (analysis/surface/operations.py).
function renderWorker(row, w) {
  row.id = "worker-" + w.worker_id; row.dataset.busy = String(w.busy);
  row.dataset.busyThreads = String(w.busy_threads); row.dataset.idleThreads = String(w.idle_threads ?? "");
  cell(row, w.hostname + ":" + w.pid).append(el("div", w.worker_id, "muted worker-id"));
  cell(row, w.queues.join(", "));
  const threads = w.threads == null
    ? w.busy_threads + " busy (threads not reported)"
    : w.busy_threads + " busy, " + w.idle_threads + " idle of " + w.threads + " thread" + (w.threads === 1 ? "" : "s");
  const state = cell(row, threads, "threads " + (w.busy ? "state-busy" : "muted"));
  if (w.waiting) state.append(el("div", w.waiting + " more claimed, waiting for a thread", "muted"));
  const current = cell(row, w.current.length ? "" : "—", "current");
  for (const m of w.current) {
    current.append(el("div", m.actor_name + " on " + m.queue_name + ", message " + m.id + ", running since " +
      (m.started_at ? new Date(m.started_at).toLocaleTimeString() + " (" + ago(m.running_seconds) + ")" : "—"),
      "current-message"));
  }
  cell(row, ago(w.seconds_since_seen) + " ago");
}

function renderRunning(row, j) {
  row.id = "running-" + j.id; row.dataset.status = j.status;
  cell(row, j.id); cell(row, j.user_id); cell(row, j.thesis_filename);
  cell(row, j.status === "pending" ? "waiting for a worker" : j.status, "status status-" + j.status);
  cell(row, j.progress && j.progress.total ? j.progress.judged + "/" + j.progress.total + " judged" : "—");
  cell(row, when(j.started_at));
}

function renderDead(row, d) {
  row.id = "dead-" + d.id;
  cell(row, d.id); cell(row, d.queue_name); cell(row, d.actor_name); cell(row, d.attempts); cell(row, when(d.failed_at));
  cell(row, d.last_line, "exception");
  const actions = cell(row, "", "actions");
  actions.append(button("Retry", "retry", () => deadAction(d, "retry")), " ",
                 button("Purge", "purge", () => deadAction(d, "purge")));
  if (d.traceback) {
    const t = button("Traceback", "show-traceback", null);
    const detailId = "traceback-" + d.id;
    t.setAttribute("aria-controls", detailId);
    t.setAttribute("aria-expanded", String(ops.tracebacks.has(d.id)));
    t.onclick = () => {
      if (ops.tracebacks.has(d.id)) ops.tracebacks.delete(d.id); else ops.tracebacks.add(d.id);
      const open = ops.tracebacks.has(d.id);
      t.setAttribute("aria-expanded", String(open)); $(detailId).hidden = !open;
    };
    actions.append(" ", t);
    // The traceback row follows this one (the row is in the table already: fill inserts first).
    const tr = el("tr", null, "traceback"); tr.id = detailId; tr.hidden = !ops.tracebacks.has(d.id); tr.dataset.companion = "1";
    const td = el("td", null, "wide"); td.colSpan = 7; td.append(el("pre", d.traceback)); tr.append(td);
    row.after(tr);
  }
}

async function deadAction(d, verb) {
  say("dead-result", null);
  try {
    if (verb === "retry") await api("POST", "/api/ops/dead-letters/" + d.id + "/retry");
    else await api("DELETE", "/api/ops/dead-letters/" + d.id);
    $("dead-result").className = "result";
    say("dead-result", new Error(verb === "retry"
      ? "Dead letter " + d.id + " (" + d.actor_name + ") is back on queue " + d.queue_name + " and will run again."
      : "Dead letter " + d.id + " (" + d.actor_name + ") was purged for good."));
    await refresh();
  } catch (e) {
    $("dead-result").className = "error";
    say("dead-result", new Error("Dead letter " + d.id + " was not " + (verb === "retry" ? "retried" : "purged") + ": " + e.message));
  }
}

// Bulk actions ask first, in the page: what will happen to how many, and a button naming it.
let bulkVerb = null;
function askBulk(verb) {
  const n = ops.dead.length;
  bulkVerb = verb;
  $("bulk-question").textContent = verb === "retry"
    ? "Put all " + n + " dead letter" + (n === 1 ? "" : "s") + " back on their queues?"
    : "Delete all " + n + " dead letter" + (n === 1 ? "" : "s") + " for good? This cannot be undone.";
  $("bulk-yes").textContent = (verb === "retry" ? "Retry " : "Purge ") + n;
  $("bulk-confirm").hidden = false; say("dead-result", null);
  $("bulk-yes").focus();
}

async function doBulk() {
  const verb = bulkVerb; $("bulk-confirm").hidden = true; bulkVerb = null;
  try {
    const r = verb === "retry" ? await api("POST", "/api/ops/dead-letters/retry") : await api("DELETE", "/api/ops/dead-letters");
    const n = verb === "retry" ? r.retried : r.purged;
    $("dead-result").className = "result";
    say("dead-result", new Error((verb === "retry" ? "Retried " : "Purged ") + n + " dead letter" + (n === 1 ? "" : "s") + "."));
    await refresh();
  } catch (e) { $("dead-result").className = "error"; say("dead-result", e); }
}

$("retry-all").addEventListener("click", () => askBulk("retry"));
$("purge-all").addEventListener("click", () => askBulk("purge"));
$("bulk-yes").addEventListener("click", doBulk);
$("bulk-no").addEventListener("click", () => { $("bulk-confirm").hidden = true; bulkVerb = null; $("dead-result").className = "result"; say("dead-result", new Error("Nothing was changed.")); });

// -- message groups (issue 25) ---------------------------------------------------------------
// Per queue the counts of /api/ops/groups; below them the keys (/api/ops/groups/keys), each
// with its unfinished messages on request. An open key's messages are read again with every
// poll; a key has a number of its own for the ids of its rows (a key is any string).

const groups = { open: new Set(), messages: {}, ids: new Map() };
const GROUP_MESSAGES = 50;

function groupNumber(k) {
  const name = JSON.stringify([k.queue_name, k.group_key]);
  if (!groups.ids.has(name)) groups.ids.set(name, groups.ids.size + 1);
  return groups.ids.get(name);
}

async function pollGroups() {
  const [stats, keys] = await Promise.all([api("GET", "/api/ops/groups"), api("GET", "/api/ops/groups/keys")]);
  // Ages change every second: written into their cells, not re-rendered with the rows (as for queues).
  fill("#groups", stats, renderGroupQueue, "no message groups: no grouped message is waiting or in flight",
       s => ({ ...s, oldest_held_age_seconds: null }));
  for (const s of stats) {
    const c = document.querySelector("#group-queue-" + CSS.escape(s.queue_name) + " .oldest");
    if (c) c.textContent = s.held ? ago(s.oldest_held_age_seconds) : "—";
  }
  $("group-keys-box").hidden = !keys.length;
  fill("#group-keys", keys, renderGroupKey, null, k => ({ ...k, oldest_held_age_seconds: null }));
  for (const k of keys) {
    const c = document.querySelector("#group-key-" + groupNumber(k) + " .oldest");
    if (c) c.textContent = k.held ? ago(k.oldest_held_age_seconds) : "—";
  }
  await Promise.all(keys.filter(k => groups.open.has(groupNumber(k))).map(loadGroupMessages));
}

function renderGroupQueue(row, s) {
  row.id = "group-queue-" + s.queue_name;
  cell(row, s.queue_name); cell(row, s.waiting_keys, "waiting-keys"); cell(row, s.held, "held");
  cell(row, s.in_flight, "in-flight"); cell(row, s.busy_keys, "busy-keys");
  cell(row, s.held ? ago(s.oldest_held_age_seconds) : "—", "oldest");
}

function renderGroupKey(row, k) {
  const n = groupNumber(k), listId = "group-messages-" + n;
  row.id = "group-key-" + n; row.dataset.queue = k.queue_name; row.dataset.groupKey = k.group_key;
  cell(row, k.queue_name); cell(row, k.group_key, "group-key"); cell(row, k.held, "held");
  cell(row, k.in_flight, "in-flight"); cell(row, k.held ? ago(k.oldest_held_age_seconds) : "—", "oldest");
  const t = button("Messages", "show-messages", null);
  t.setAttribute("aria-controls", listId);
  t.setAttribute("aria-expanded", String(groups.open.has(n)));
  t.onclick = () => {
    if (groups.open.has(n)) groups.open.delete(n); else groups.open.add(n);
    const open = groups.open.has(n);
    t.setAttribute("aria-expanded", String(open)); $(listId).hidden = !open;
    if (open) loadGroupMessages(k);
  };
  cell(row, "", "actions").append(t);
  // The messages' row follows this one (the row is in the table already: fill inserts first).
  const tr = el("tr", null, "group-messages"); tr.id = listId; tr.hidden = !groups.open.has(n); tr.dataset.companion = "1";
  const td = el("td", null, "wide"); td.colSpan = 6; tr.append(td);
  row.after(tr);
  drawGroupMessages(k);
}

// Never throws: a failed read is shown in the key's row (the poll reports an unreachable server).
async function loadGroupMessages(k) {
  const n = groupNumber(k);
  try {
    groups.messages[n] = await api("GET", "/api/ops/groups/" + encodeURIComponent(k.queue_name) + "/messages?key=" +
                                          encodeURIComponent(k.group_key) + "&limit=" + GROUP_MESSAGES);
  } catch (e) { groups.messages[n] = e; }
  drawGroupMessages(k);
}

function groupMessageText(m) {
  const state = m.state === "held" ? "waiting for its key's turn"
    : m.state === "running" ? "running since " + when(m.started_at)
    : new Date(m.eta) > new Date() ? "its key's turn, delayed until " + when(m.eta) : "its key's turn, waiting for a worker";
  return m.actor_name + ", message " + m.id + ": " + state + (m.attempts ? ", attempt " + m.attempts : "") +
    "; sent " + when(m.enqueued_at);
}

function drawGroupMessages(k) {
  const tr = $("group-messages-" + groupNumber(k));
  if (!tr) return;
  const got = groups.messages[groupNumber(k)], td = tr.cells[0];
  if (got === undefined) { td.replaceChildren(el("p", "reading the messages …", "muted")); return; }
  if (got instanceof Error) { td.replaceChildren(el("p", "The messages of key " + k.group_key + " could not be read: " + got.message, "error")); return; }
  if (!got.length) { td.replaceChildren(el("p", "no unfinished message", "muted")); return; }
  const list = el("ol", null, "group-message-list");
  list.setAttribute("aria-label", "Messages of key " + k.group_key + " in queue " + k.queue_name + ", in the key's order");
  for (const m of got) { const li = el("li", groupMessageText(m)); li.dataset.state = m.state; li.dataset.id = String(m.id); list.append(li); }
  const more = k.held + k.in_flight - got.length;
  td.replaceChildren(list, ...(more > 0 ? [el("p", "and " + more + " more", "muted")] : []));
}

// -- the report of one analysis --------------------------------------------------------------
// Polls GET /api/analyses/{id}/report.json while the report is open: verdicts appear as the
// judges write them. Every value is set with textContent, never parsed as HTML.

const report = { job: null, data: null, seen: "", unfolded: new Set() };

function verdictOf(c) { return c.verdict || "pending"; }

function openReport(jobId) {
  report.job = jobId; report.data = null; report.seen = ""; report.unfolded.clear();
  $("verdict-filter").value = "";
  $("delta-status").textContent = ""; say("download-error", null);
  $("citations").tBodies[0].replaceChildren();
  $("evidence-view").hidden = true;
  $("report-title").textContent = "Report of job " + jobId;
  showViews();
  pollReport().catch(e => say("refresh-error", e));
}

function closeReport() {
  report.job = null; report.data = null;
  showViews();
}

async function pollReport() {
  const jobId = report.job;
  if (jobId === null) return;
  // A finished job's report no longer changes: read it once.
  if (report.data && report.data.job.finished_at && report.data.job.id === jobId) return;
  const data = await api("GET", "/api/analyses/" + jobId + "/report.json");
  if (report.job !== jobId) return;
  const shape = JSON.stringify({ ...data, generated_at: null });
  if (shape === report.seen) { renderState(data); return; }
  report.seen = shape; report.data = data;
  renderReport(data);
}

// Where a job stands, in words: its queue position comes from the job list.
function renderState(data) {
  const j = data.job;
  const listed = lastJobs.find(x => x.id === j.id);
  let text = "";
  if (j.status === "queued") text = (listed && listed.position ? ordinal(listed.position) + " in your queue" : "Queued") +
    ": it starts when your earlier analyses have finished.";
  else if (j.status === "pending") text = "Waiting for a worker: it starts as soon as one is free.";
  else if (j.status === "running") text = data.total ? "Running: " + data.judged + " of " + data.total + " citations checked." : "Running: finding the citations in the thesis.";
  else if (j.status === "failed") text = "This analysis failed" + (j.error ? ": " + j.error : ".");
  else if (j.status === "canceled") text = "This analysis was canceled; its credit was refunded.";
  $("report-state").textContent = text;
}

function pickVerdict(v) { $("verdict-filter").value = v; applyFilter(); }

function renderReport(data) {
  const view = $("report-view");
  view.dataset.job = String(data.job.id); view.dataset.status = data.job.status;
  $("report-title").textContent =
    "Report of job " + data.job.id + ": " + data.thesis.filename + (data.thesis.pages ? " (" + data.thesis.pages + " pages)" : "");
  renderState(data);
  const j = data.job;
  renderTriage(data);
  const facts = [["Status", j.status + (j.error ? ": " + j.error : "")], ["Checked by", j.checked_by],
                 ["Passages found by", j.passages_by], ["Started", when(j.started_at)], ["Finished", when(j.finished_at)],
                 ["Duration", j.duration_seconds == null ? "—" : j.duration_seconds.toFixed(1) + " s"],
                 ["Citations", data.judged + " of " + data.total + " checked"]];
  if (j.delta_of) facts.unshift(["Re-check of", "job " + j.delta_of]);
  $("report-facts").replaceChildren(...facts.flatMap(([k, v]) => [el("dt", k), el("dd", v)]));

  const counts = $("report-counts");
  counts.className = "counts";
  counts.replaceChildren(...countBadges(data.counts, pickVerdict));
  const select = $("verdict-filter");
  const chosen = select.value;
  select.replaceChildren(el("option", "all citations"), ...VERDICTS.filter(v => v !== "pending" || data.counts.pending)
    .map(v => { const o = el("option", LABELS[v] + " (" + (data.counts[v] || 0) + ")"); o.value = v; return o; }));
  select.options[0].value = ""; select.value = chosen;

  const body = $("citations").tBodies[0];
  const rows = [];
  for (const c of data.citations) rows.push(...citationRows(c, data));
  if (!data.citations.length) {
    const r = el("tr"); const td = el("td", j.finished_at ? "No citations were found in the thesis." : "No citations found yet: see the state above.", "muted wide");
    td.colSpan = 6; r.append(td); rows.push(r);
  }
  body.replaceChildren(...rows);
  applyFilter();

  const replace = $("delta-replace");
  const keep = replace.value;
  replace.replaceChildren(el("option", "nothing (an added source)"), ...data.sources.map(s => {
    const o = el("option", s.filename); o.value = String(s.document_id); return o; }));
  replace.options[0].value = ""; replace.value = keep;
}

function renderTriage(data) {
  const needs = ATTENTION.filter(v => data.counts[v]);
  const total = needs.reduce((n, v) => n + data.counts[v], 0);
  const box = $("triage");
  box.classList.toggle("clear", !total);
  box.dataset.total = String(total);
  $("triage-summary").textContent = !data.total ? "Nothing to look at yet." : total
    ? total + " of " + data.total + " citations need you. Start with the ones the source contradicts."
    : data.counts.pending ? "Nothing so far; " + data.counts.pending + " citations are still being checked."
    : "Nothing needs attention: every citation is supported by its source.";
  $("triage-list").replaceChildren(...needs.map(v => {
    const li = el("li");
    const b = badge(v, data.counts[v] + " " + LABELS[v], "button");
    b.dataset.verdict = v; b.title = "show only the " + LABELS[v] + " citations";
    b.onclick = () => { pickVerdict(v); $("h-citations").scrollIntoView(); };
    li.append(b); return li;
  }));
}

function citationRows(c, data) {
  const verdict = verdictOf(c);
  const row = el("tr", null, "citation");
  row.id = "cit-" + c.number; row.dataset.verdict = verdict;
  const v = el("td", null, "verdict");
  v.append(badge(verdict));
  if (c.carried_over) v.append(" ", el("span", "carried over", "carried"));
  const toggle = button("Details", "link toggle", null);
  toggle.setAttribute("aria-controls", "detail-" + c.number);
  v.append(toggle);
  row.append(v, el("td", c.number), el("td", c.marker, "marker"), el("td", c.claim, "claim"),
             el("td", c.page == null ? "—" : c.page),
             el("td", c.source_filename || "not found among your sources", c.source_filename ? "source" : "source unresolved"));
  const labels = ["Verdict", "#", "Citation", "Claim", "Thesis page", "Cited source"];
  [...row.cells].forEach((td, i) => { td.dataset.label = labels[i]; });

  const detail = el("tr", null, "detail"); detail.id = "detail-" + c.number; detail.dataset.verdict = verdict;
  const td = el("td", null, "wide"); td.colSpan = 6; detail.append(td);
  td.append(el("p", c.finding, "verdict-sentence"));
  const side = el("div", null, "side-by-side");
  const claim = el("div", null, "detail-claim");
  claim.append(el("h4", "Claim"), el("p", c.claim), el("p", c.marker + (c.page == null ? "" : ", thesis p. " + c.page), "muted"));
  if (c.reference) claim.append(el("p", c.reference, "muted reference"));
  const evidence = el("div", null, "detail-evidence");
  evidence.append(el("h4", "Evidence" + (c.source_filename ? " in " + c.source_filename : "")));
  if (c.evidence) evidence.append(el("blockquote", c.evidence, "evidence-quote"));
  else evidence.append(el("p", c.verdict ? "no passage quoted" : "not checked yet", "muted"));
  if (c.evidence_page != null) evidence.append(el("p", "source p. " + c.evidence_page, "evidence-page"));
  if (c.page != null || (c.evidence && c.evidence_page != null)) {
    const open = button(c.evidence && c.evidence_page != null ? "Open the source at p. " + c.evidence_page
                                                              : "Open the thesis at p. " + c.page, "open-evidence", null);
    open.onclick = ev => { ev.stopPropagation(); openEvidence(c.number, open); };
    evidence.append(open);
  }
  const why = el("div", null, "detail-rationale");
  why.append(el("h4", "How it was decided"), el("p", c.rationale || (c.verdict ? "—" : "not checked yet"), "rationale"));
  why.append(el("p", c.source_document_id ? "source found by " + c.found_by
                                          : "source not found" + (c.unresolved_reason ? ": " + c.unresolved_reason : ""), "muted"));
  if (c.carried_over) why.append(el("p", "verdict carried over from job " + data.job.delta_of + " (unchanged claim and source)", "muted"));
  side.append(claim, evidence, why); td.append(side);

  const show = () => {
    const open = report.unfolded.has(c.number);
    detail.hidden = row.hidden || !open; row.classList.toggle("unfolded", open);
    toggle.setAttribute("aria-expanded", String(open));
    toggle.textContent = open ? "Hide details" : "Details";
  };
  const flip = () => {
    if (report.unfolded.has(c.number)) report.unfolded.delete(c.number); else report.unfolded.add(c.number);
    show();
  };
  toggle.onclick = ev => { ev.stopPropagation(); flip(); };
  row.onclick = ev => { if (!ev.target.closest("button, a")) flip(); };
  show();
  return [row, detail];
}

// -- a citation in place: thesis page and source page, the claim and the quote marked ----------

let evidenceOpener = null;

function renderPane(id, title, page, missing) {
  const pane = $(id);
  pane.querySelector("h4").textContent = title;
  const note = pane.querySelector(".pane-note");
  const text = pane.querySelector(".pane-text");
  text.replaceChildren();
  if (!page) { note.textContent = missing; pane.dataset.found = "false"; return; }
  note.textContent = page.found || !page.blocks.length ? ""
    : "The quoted text is not on this page word for word; the citation's details show it as it was quoted.";
  pane.dataset.found = String(page.found);
  for (const b of page.blocks) {
    const p = el("p", null, "block-" + b.kind);
    let at = 0;
    for (const [start, end] of [...b.marks].sort((x, y) => x[0] - y[0])) {
      if (start < at) continue;
      p.append(b.text.slice(at, start), el("mark", b.text.slice(start, end)));
      at = end;
    }
    p.append(b.text.slice(at));
    text.append(p);
  }
  if (!page.blocks.length) text.append(el("p", "No text of this page is stored (a scanned page, or a document parsed before pages were kept).", "muted"));
}

// A claim the judge split into parts: what the source says to each part, not only to the one
// the verdict quotes (a sentence on the source page shown is marked there too).
function renderParts(parts, sourcePage) {
  const list = $("evidence-parts-list");
  list.replaceChildren();
  $("evidence-parts").hidden = parts.length < 2;
  parts.forEach((p, i) => {
    const li = el("li", null, "evidence-part"); li.dataset.part = String(i + 1);
    li.append(el("div", "“" + p.part + "”", "part-claim"));
    const where = p.sentence == null ? null : p.page == null ? "In the source" : "Source p. " + p.page;
    li.append(p.sentence == null
      ? el("div", "No sentence of the source shares this part's words.", "muted part-none")
      : el("div", where + ": “" + p.sentence + "”", "part-sentence"));
    if (p.sentence != null) {
      li.append(el("div", Math.round(p.coverage * 100) + " % of this part's key terms in that sentence" +
        (p.marked ? "; marked on the source page below" : sourcePage && p.page !== sourcePage ? "; on another page than the one below" : ""),
        "muted part-coverage"));
    }
    list.append(li);
  });
}

async function openEvidence(number, opener) {
  const view = $("evidence-view");
  evidenceOpener = opener; say("evidence-error", null);
  try {
    const e = await api("GET", "/api/analyses/" + report.job + "/citations/" + number + "/evidence");
    view.dataset.citation = String(number);
    $("h-evidence").textContent = "Citation " + number + " in place";
    const t = e.thesis, s = e.source;
    renderPane("pane-thesis", t ? "Thesis, p. " + t.page + (t.pages ? " of " + t.pages : "") + ": " + t.filename : "Thesis",
               t, "This citation has no thesis page.");
    renderPane("pane-source", s ? "Source, p. " + s.page + (s.pages ? " of " + s.pages : "") + ": " + s.filename : "Source",
               s, "No passage of a source was quoted for this citation.");
    renderParts(e.parts || [], s ? s.page : null);
    view.hidden = false;
    $("h-evidence").focus();
    // Each pane scrolls to its first mark (the page itself stays where it is).
    for (const box of view.querySelectorAll(".pane-text")) {
      const m = box.querySelector("mark");
      if (m) box.scrollTop = Math.max(0, m.offsetTop - 40);
    }
  } catch (err) { view.hidden = false; say("evidence-error", new Error("The pages could not be opened: " + err.message)); }
}

$("evidence-close").addEventListener("click", () => {
  $("evidence-view").hidden = true;
  if (evidenceOpener && evidenceOpener.isConnected) evidenceOpener.focus();
});

function applyFilter() {
  const wanted = $("verdict-filter").value;
  for (const r of document.querySelectorAll("#citations tbody tr.citation")) {
    r.hidden = wanted !== "" && r.dataset.verdict !== wanted;
    const d = r.nextElementSibling;
    if (d && d.classList.contains("detail")) d.hidden = r.hidden || !report.unfolded.has(Number(r.id.slice(4)));
  }
  $("citations").dataset.filter = wanted;
}

// Downloads go through fetch with the Authorization header and are saved from a Blob:
// a token never travels in a URL.
async function download(format) {
  say("download-error", null);
  const jobId = report.job;
  const r = await fetch("/api/analyses/" + jobId + "/report" + (format === "csv" ? ".csv" : ""),
                        { headers: { "Authorization": "Bearer " + token } });
  if (!r.ok) throw new Error("The " + format.toUpperCase() + " download failed (" + r.status + "). Try again.");
  const url = URL.createObjectURL(await r.blob());
  const a = document.createElement("a"); a.href = url; a.download = "citeq-report-" + jobId + "." + format;
  document.body.append(a); a.click(); a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

// -- uploads and starting an analysis --------------------------------------------------------
// POST /api/uploads answers at once; each parse job is polled until every file is parsed or
// failed. Each upload adds to the list; "Clear the list" empties it.

const uploads = { jobs: [], views: {}, key: "", session: null };

async function upload(files, kind, sessionId) {
  const form = new FormData();
  for (const f of files) form.append("files", f, f.name);
  form.append("kind", kind);
  if (sessionId) form.append("session_id", String(sessionId));
  return api("POST", "/api/uploads", form);
}

async function pollUploads() {
  const open = uploads.jobs.filter(id => !(uploads.views[id] && uploads.views[id].terminal));
  if (!open.length) return;
  const views = await Promise.all(open.map(id => api("GET", "/api/uploads/" + id)));
  for (const v of views) uploads.views[v.parse_job_id] = v;
  renderUploads();
}

function uploadedItems() { return uploads.jobs.flatMap(id => (uploads.views[id] ? uploads.views[id].items : [])); }
// The thesis is the one uploaded last; every parsed source counts.
function chosenThesis(items) { return items.filter(i => i.kind === "thesis" && i.document_id).pop(); }

function renderUploads() {
  const table = $("upload-files");
  table.hidden = !uploads.jobs.length; $("upload-clear").hidden = !uploads.jobs.length;
  const items = uploadedItems();
  fill("#upload-files", items, (r, item) => {
    r.className = "upload-item"; r.dataset.status = item.status;
    cell(r, item.filename); cell(r, item.kind);
    cell(r, item.status + (item.error_reason ? ": " + item.error_reason : ""), "status status-" + item.status);
  });
  const thesis = chosenThesis(items);
  const sources = items.filter(i => i.kind === "source" && i.document_id);
  const waiting = items.some(i => i.status === "queued" || i.status === "running");
  $("start-analysis").disabled = waiting || !thesis || !sources.length;
  $("upload-note").textContent = waiting ? "parsing ..." :
    !thesis ? "upload a thesis" : !sources.length ? "upload at least one source" :
    "ready: " + thesis.filename + " against " + sources.length + " source" + (sources.length === 1 ? "" : "s") + ".";
}

function clearUploads() {
  uploads.jobs = []; uploads.views = {}; uploads.session = null; uploads.key = ""; renderUploads();
}

$("upload-form").addEventListener("submit", async ev => {
  ev.preventDefault();
  say("upload-error", null); say("start-error", null);
  const thesis = $("upload-thesis").files;
  const sources = $("upload-sources").files;
  if (!thesis.length && !sources.length) { say("upload-error", new Error("Choose a thesis or sources to upload first.")); return; }
  try {
    uploads.key = "";  // the list changes: a new admission
    if (thesis.length) { const a = await upload(thesis, "thesis", uploads.session); uploads.session = a.session_id; uploads.jobs.push(a.jobId); }
    if (sources.length) { const a = await upload(sources, "source", uploads.session); uploads.session = uploads.session || a.session_id; uploads.jobs.push(a.jobId); }
    ev.target.reset(); renderUploads(); await pollUploads();
  } catch (e) { say("upload-error", new Error("The upload was refused: " + e.message)); }
});
$("upload-form").addEventListener("change", () => say("upload-error", null));
$("upload-clear").addEventListener("click", () => { say("start-error", null); clearUploads(); });

$("start-analysis").addEventListener("click", async () => {
  say("start-error", null);
  const items = uploadedItems();
  const thesis = chosenThesis(items);
  const sources = items.filter(i => i.kind === "source" && i.document_id).map(i => i.document_id);
  uploads.key = uploads.key || "dashboard-" + Date.now() + "-" + Math.random().toString(36).slice(2);
  try {
    const job = await api("POST", "/api/analyses", { thesis_id: thesis.document_id, source_ids: sources, idempotency_key: uploads.key });
    clearUploads();
    await refresh(); openReport(job.id);
  } catch (e) { say("start-error", new Error("The analysis was not started: " + e.message)); }
});

// A delta re-check from the report: upload the corrected source, wait for it to be parsed,
// then re-check the job with it in place of the one it replaces (POST /api/analyses/{id}/delta).
$("delta-form").addEventListener("submit", async ev => {
  ev.preventDefault();
  const file = $("delta-file").files;
  const status = $("delta-status");
  const data = report.data;
  if (!file.length || !data) { status.textContent = "Choose the corrected file first."; return; }
  const replaced = $("delta-replace").value;
  try {
    status.textContent = "uploading ...";
    const staged = await upload(file, "source");
    let view = null;
    const deadline = Date.now() + 300000;
    while (!(view && view.terminal)) {
      if (Date.now() > deadline) throw new Error("the corrected file was not parsed in time");
      await new Promise(done => setTimeout(done, POLL_MS));
      view = await api("GET", "/api/uploads/" + staged.jobId);
      status.textContent = "parsing: " + view.status;
    }
    const item = view.items[0];
    if (!item.document_id) throw new Error("the corrected file could not be parsed: " + (item.error_reason || item.status));
    const sources = data.sources.map(s => s.document_id).filter(id => String(id) !== replaced).concat([item.document_id]);
    const job = await api("POST", "/api/analyses/" + data.job.id + "/delta", { source_ids: sources });
    ev.target.reset(); status.textContent = "";
    openReport(job.id);
  } catch (e) { status.textContent = "The re-check was not started: " + e.message; }
});

$("verdict-filter").addEventListener("change", applyFilter);
$("report-close").addEventListener("click", () => { closeReport(); refresh(); });
$("download-html").addEventListener("click", () => download("html").catch(e => say("download-error", e)));
$("download-csv").addEventListener("click", () => download("csv").catch(e => say("download-error", e)));

$("login").addEventListener("submit", ev => {
  ev.preventDefault(); useToken($("token").value.trim());
});
$("token").addEventListener("input", () => say("login-error", null));
// A #token= link pasted into an open tab signs in with it, no reload needed.
window.addEventListener("hashchange", () => { const t = fromFragment(); if (t) useToken(t); });
const initial = fromFragment() || sessionStorage.getItem("citeq-token");
if (initial) useToken(initial); else showViews();
setInterval(refresh, POLL_MS);
