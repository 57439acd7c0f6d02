"use strict";
// Polls the JSON API (the same routes any client uses) once a second; no reload needed.
const POLL_MS = 1000;
let token = "";

function fromFragment() {
  const m = /(?:^|[#&])token=([^&]+)/.exec(location.hash);
  if (m) { history.replaceState(null, "", location.pathname + location.search); return decodeURIComponent(m[1]); }
  return null;
}

// body: FormData (multipart; the browser sets its type and length) or an object sent as JSON.
async function api(method, path, body) {
  const headers = { "Authorization": "Bearer " + token };
  let payload = body;
  if (body !== undefined && !(body instanceof FormData)) { headers["Content-Type"] = "application/json"; payload = JSON.stringify(body); }
  const r = await fetch(path, { method, headers, body: payload });
  const answer = await r.json().catch(() => null);
  if (!r.ok) { const e = new Error((answer && answer.error && answer.error.message) || r.statusText); e.status = r.status; throw e; }
  return answer;
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
  const first = cell(row, "");
  const open = document.createElement("button"); open.type = "button"; open.className = "link open-report";
  open.textContent = String(job.id); open.title = "open the report of job " + job.id;
  open.onclick = () => openReport(job.id);
  first.append(open, job.delta_of ? " (re-check of " + job.delta_of + ")" : "");
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
    document.getElementById("user-view").hidden = report.job !== null;
    fill("#jobs", jobs, renderJob);
  }).catch(e => { if (e.status === 403) { isUser = false; document.getElementById("user-view").hidden = true; } else throw e; }));
  if (isUser) tasks.push(pollUploads(), pollReport());
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
  token = t; isUser = isOps = true; closeReport();
  sessionStorage.setItem("citeq-token", t);
  api("GET", "/api/me").then(me => { document.getElementById("who").textContent = "signed in as " + (me.name || me.user_id) + ", " + me.credits + " credits"; })
    .catch(e => { document.getElementById("who").textContent = e.status === 403 ? "operator" : ""; if (e.status === 401) showError(e); });
  refresh();
}


// -- the report of one analysis --------------------------------------------------------------
// Polls GET /api/analyses/{id}/report.json while the report is open: verdicts appear as the
// judges write them. Every value is set with textContent, never parsed as HTML.

const VERDICTS = ["not_supported", "partially_supported", "uncertain", "source_missing", "supported", "pending"];
const LABELS = { not_supported: "not supported", partially_supported: "partially supported", uncertain: "uncertain",
                 source_missing: "source missing", supported: "supported", pending: "pending" };
const report = { job: null, data: null, seen: "", unfolded: new Set() };

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text != null) e.textContent = String(text);
  if (cls) e.className = cls;
  return e;
}

function verdictOf(c) { return c.verdict || "pending"; }

function openReport(jobId) {
  report.job = jobId; report.data = null; report.seen = ""; report.unfolded.clear();
  document.getElementById("verdict-filter").value = "";
  document.getElementById("delta-status").textContent = "";
  document.getElementById("citations").tBodies[0].replaceChildren();
  document.getElementById("report-title").textContent = "Report of job " + jobId;
  document.getElementById("user-view").hidden = true;
  document.getElementById("report-view").hidden = false;
  pollReport().catch(showError);
}

function closeReport() {
  report.job = null; report.data = null;
  document.getElementById("report-view").hidden = true;
  if (isUser && token) document.getElementById("user-view").hidden = false;
}

async function pollReport() {
  const jobId = report.job;
  if (jobId === null) return;
  // A finished job's report no longer changes: read it once.
  if (report.data && report.data.job.finished_at && report.data.job.id === jobId) return;
  const data = await api("GET", "/api/analyses/" + jobId + "/report.json");
  if (report.job !== jobId) return;
  const shape = JSON.stringify({ ...data, generated_at: null });
  if (shape === report.seen) return;
  report.seen = shape; report.data = data;
  renderReport(data);
}

function renderReport(data) {
  const view = document.getElementById("report-view");
  view.dataset.job = String(data.job.id); view.dataset.status = data.job.status;
  document.getElementById("report-title").textContent =
    "Report of job " + data.job.id + ": " + data.thesis.filename + (data.thesis.pages ? " (" + data.thesis.pages + " pages)" : "");
  const j = data.job;
  const facts = [["Status", j.status + (j.error ? ": " + j.error : "")], ["Judge", j.judge || "—"],
                 ["Retrieval", j.retrieval_mode || "—"], ["Started", when(j.started_at)], ["Finished", when(j.finished_at)],
                 ["Duration", j.duration_seconds == null ? "—" : j.duration_seconds.toFixed(1) + " s"],
                 ["Citations", data.judged + " of " + data.total + " judged"]];
  if (j.delta_of) facts.unshift(["Re-check of", "job " + j.delta_of]);
  document.getElementById("report-facts").replaceChildren(...facts.flatMap(([k, v]) => [el("dt", k), el("dd", v)]));

  const counts = document.getElementById("report-counts");
  counts.replaceChildren(...VERDICTS.filter(v => data.counts[v]).map(v => {
    const b = el("button", data.counts[v] + " " + LABELS[v], "count verdict-" + v);
    b.type = "button"; b.dataset.verdict = v;
    b.onclick = () => { document.getElementById("verdict-filter").value = v; applyFilter(); };
    return b;
  }));
  const select = document.getElementById("verdict-filter");
  const chosen = select.value;
  select.replaceChildren(el("option", "all citations"), ...VERDICTS.filter(v => v !== "pending" || data.counts.pending)
    .map(v => { const o = el("option", LABELS[v] + " (" + (data.counts[v] || 0) + ")"); o.value = v; return o; }));
  select.options[0].value = ""; select.value = chosen;

  const body = document.getElementById("citations").tBodies[0];
  const rows = [];
  for (const c of data.citations) rows.push(...citationRows(c, data));
  if (!data.citations.length) { const r = el("tr"); const td = el("td", j.finished_at ? "no citations found" : "no citations extracted yet", "muted"); td.colSpan = 6; r.append(td); rows.push(r); }
  body.replaceChildren(...rows);
  applyFilter();

  const replace = document.getElementById("delta-replace");
  const keep = replace.value;
  replace.replaceChildren(el("option", "nothing (an added source)"), ...data.sources.map(s => {
    const o = el("option", s.filename); o.value = String(s.document_id); return o; }));
  replace.options[0].value = ""; replace.value = keep;
}

function citationRows(c, data) {
  const row = el("tr", null, "citation verdict-" + verdictOf(c));
  row.id = "cit-" + c.number; row.dataset.verdict = verdictOf(c); row.tabIndex = 0;
  row.append(el("td", c.number), el("td", c.marker, "marker"), el("td", c.claim, "claim"),
             el("td", c.page == null ? "" : c.page),
             el("td", c.source_filename || "not resolved", c.source_filename ? "source" : "source unresolved"));
  const v = el("td", null, "verdict");
  v.append(el("span", LABELS[verdictOf(c)], "badge"));
  if (c.confidence != null) v.append(" ", el("span", c.confidence.toFixed(2), "muted"));
  if (c.carried_over) v.append(" ", el("span", "carried over", "carried"));
  row.append(v);

  const detail = el("tr", null, "detail"); detail.id = "detail-" + c.number; detail.dataset.verdict = verdictOf(c);
  const td = el("td"); td.colSpan = 6; detail.append(td);
  const side = el("div", null, "side-by-side");
  const claim = el("div", null, "detail-claim");
  claim.append(el("h4", "Claim"), el("p", c.claim), el("p", c.marker + (c.page == null ? "" : ", thesis p. " + c.page), "muted"));
  if (c.reference) claim.append(el("p", c.reference, "muted reference"));
  const evidence = el("div", null, "detail-evidence");
  evidence.append(el("h4", "Evidence" + (c.source_filename ? " in " + c.source_filename : "")));
  if (c.evidence) evidence.append(el("blockquote", c.evidence, "evidence-quote"));
  else evidence.append(el("p", c.verdict ? "no passage quoted" : "not judged yet", "muted"));
  if (c.evidence_page != null) evidence.append(el("p", "source p. " + c.evidence_page, "evidence-page"));
  const why = el("div", null, "detail-rationale");
  why.append(el("h4", "Rationale"), el("p", c.rationale || (c.verdict ? "—" : "not judged yet"), "rationale"));
  why.append(el("p", c.source_document_id ? "matched by " + (c.match_method || "—")
                                          : "not resolved" + (c.unresolved_reason ? ": " + c.unresolved_reason : ""), "muted"));
  if (c.carried_over) why.append(el("p", "verdict carried over from job " + data.job.delta_of + " (unchanged claim and source)", "muted"));
  side.append(claim, evidence, why); td.append(side);
  detail.hidden = !report.unfolded.has(c.number);
  row.classList.toggle("unfolded", !detail.hidden);
  const toggle = () => {
    if (report.unfolded.has(c.number)) report.unfolded.delete(c.number); else report.unfolded.add(c.number);
    detail.hidden = !report.unfolded.has(c.number); row.classList.toggle("unfolded", !detail.hidden); applyFilter();
  };
  row.onclick = toggle;
  row.onkeydown = ev => { if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); toggle(); } };
  return [row, detail];
}

function applyFilter() {
  const wanted = document.getElementById("verdict-filter").value;
  for (const r of document.querySelectorAll("#citations tbody tr.citation")) {
    r.hidden = wanted !== "" && r.dataset.verdict !== wanted;
    const d = r.nextElementSibling;
    if (d && d.classList.contains("detail")) d.hidden = r.hidden || !report.unfolded.has(Number(r.id.slice(4)));
  }
  document.getElementById("citations").dataset.filter = wanted;
}

function when(iso) { return iso ? new Date(iso).toLocaleString() : "—"; }

// Downloads go through fetch with the Authorization header and are saved from a Blob:
// a token never travels in a URL.
async function download(format) {
  const jobId = report.job;
  const r = await fetch("/api/analyses/" + jobId + "/report" + (format === "csv" ? ".csv" : ""),
                        { headers: { "Authorization": "Bearer " + token } });
  if (!r.ok) throw new Error("download failed: " + r.status);
  const url = URL.createObjectURL(await r.blob());
  const a = document.createElement("a"); a.href = url; a.download = "citeq-report-" + jobId + "." + format;
  document.body.append(a); a.click(); a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

// -- uploads and starting an analysis --------------------------------------------------------
// POST /api/uploads answers at once; each parse job is polled until every file is parsed or failed.

const uploads = { jobs: [], views: {}, key: "" };

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

function renderUploads() {
  const table = document.getElementById("upload-files");
  table.hidden = !uploads.jobs.length;
  fill("#upload-files", uploadedItems(), (r, item) => {
    r.className = "upload-item"; r.dataset.status = item.status;
    cell(r, item.filename); cell(r, item.kind);
    cell(r, item.status + (item.error_reason ? ": " + item.error_reason : ""), "status status-" + item.status);
  });
  const items = uploadedItems();
  const thesis = items.find(i => i.kind === "thesis" && i.document_id);
  const sources = items.filter(i => i.kind === "source" && i.document_id);
  const waiting = items.some(i => i.status === "queued" || i.status === "running");
  const button = document.getElementById("start-analysis");
  button.disabled = waiting || !thesis || !sources.length;
  document.getElementById("upload-note").textContent = waiting ? "parsing ..." :
    !thesis ? "upload a thesis" : !sources.length ? "upload at least one source" : "ready: " + sources.length + " source(s)";
}

document.getElementById("upload-form").addEventListener("submit", async ev => {
  ev.preventDefault();
  const thesis = document.getElementById("upload-thesis").files;
  const sources = document.getElementById("upload-sources").files;
  if (!thesis.length && !sources.length) { showError(new Error("choose a thesis and its sources")); return; }
  try {
    uploads.jobs = []; uploads.views = {}; uploads.key = "dashboard-" + Date.now() + "-" + Math.random().toString(36).slice(2);
    let session = null;
    if (thesis.length) { const a = await upload(thesis, "thesis"); session = a.session_id; uploads.jobs.push(a.jobId); }
    if (sources.length) { const a = await upload(sources, "source", session); uploads.jobs.push(a.jobId); }
    ev.target.reset(); showError(null); await pollUploads();
  } catch (e) { showError(e); }
});

document.getElementById("start-analysis").addEventListener("click", async () => {
  const items = uploadedItems();
  const thesis = items.find(i => i.kind === "thesis" && i.document_id);
  const sources = items.filter(i => i.kind === "source" && i.document_id).map(i => i.document_id);
  try {
    const job = await api("POST", "/api/analyses", { thesis_id: thesis.document_id, source_ids: sources, idempotency_key: uploads.key });
    uploads.jobs = []; uploads.views = {}; renderUploads();
    await refresh(); openReport(job.id);
  } catch (e) { showError(e); }
});

// A delta re-check from the report: upload the corrected source, wait for it to be parsed,
// then re-check the job with it in place of the one it replaces (POST /api/analyses/{id}/delta).
document.getElementById("delta-form").addEventListener("submit", async ev => {
  ev.preventDefault();
  const file = document.getElementById("delta-file").files;
  const status = document.getElementById("delta-status");
  const data = report.data;
  if (!file.length || !data) { status.textContent = "choose the corrected file"; return; }
  const replaced = document.getElementById("delta-replace").value;
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
  } catch (e) { status.textContent = e.message; }
});

document.getElementById("verdict-filter").addEventListener("change", applyFilter);
document.getElementById("report-close").addEventListener("click", () => { closeReport(); refresh(); });
document.getElementById("download-html").addEventListener("click", () => download("html").catch(showError));
document.getElementById("download-csv").addEventListener("click", () => download("csv").catch(showError));

document.getElementById("login").addEventListener("submit", ev => {
  ev.preventDefault(); useToken(document.getElementById("token").value.trim());
});
const initial = fromFragment() || sessionStorage.getItem("citeq-token");
if (initial) useToken(initial);
setInterval(refresh, POLL_MS);
