// The console's page: plain DOM, no framework, no build. Every value from the
// file is put in the page as text (textContent), never as markup.

/** Sent with every request that changes something: the server refuses those without it (docs/console.md). */
const CONSOLE_HEADER = { "X-Requested-With": "recruit-sync-console" };

const PERSON_FIELDS = [
  ["email", "Email"],
  ["phone", "Phone"],
  ["firstName", "First name"],
  ["lastName", "Last name"],
  ["fullName", "Full name (split into first and last)"],
  ["isOptedOut", "Opted out (yes/no)"],
  ["lastContactDate", "Last contact date"],
  ["additionalEmails", "Additional emails"],
  ["additionalPhones", "Additional phones"],
];
/** What a column gets when a person picks its field by hand. */
const DEFAULT_TRANSFORMS = {
  email: ["lowercase"],
  phone: ["phone"],
  additionalEmails: ["split", "lowercase"],
  additionalPhones: ["split", "phone"],
  lastContactDate: ["date"],
  isOptedOut: ["boolean"],
};
const WHY = {
  preset: "a CRM export's column",
  header: "its header",
  values: "its values",
  property: "a workspace property's name",
  none: "nothing matched",
};

const $ = (id) => document.getElementById(id);
const state = { upload: null, base: null, columns: [], running: null, lastRun: null };

function el(tag, text, attrs = {}) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  return node;
}

/** A duration for people: "45 s", "3 min 20 s", "1 h 5 min". */
function duration(ms) {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}
/** A time of day in the browser's zone, with "in …" from now. */
function when(iso) {
  const t = new Date(iso);
  const ahead = t.getTime() - Date.now();
  return `${t.toLocaleTimeString()}${ahead > 1000 ? ` (in ${duration(ahead)})` : ""}`;
}

function showProblem(message, problems = []) {
  const box = $("problem");
  $("problem-message").textContent = message;
  const list = $("problem-list");
  list.replaceChildren(...problems.map((p) => el("li", p.path ? `${p.path}: ${p.message}` : p.message)));
  box.hidden = false;
  box.focus();
}
function clearProblem() {
  $("problem").hidden = true;
}

async function api(method, url, body) {
  const init = { method, headers: { ...CONSOLE_HEADER } };
  if (body instanceof FormData) init.body = body;
  else if (body !== undefined) {
    init.headers["content-type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const res = await fetch(url, init);
  const text = await res.text();
  let data = null;
  try {
    data = JSON.parse(text);
  } catch {
    data = { message: text };
  }
  if (!res.ok) {
    const err = new Error(data?.message || `${res.status} ${res.statusText}`);
    err.problems = data?.problems || [];
    err.code = data?.error;
    throw err;
  }
  return data;
}

// 1. The file

async function uploadFile(file) {
  clearProblem();
  for (const id of ["mapping", "preview", "run"]) $(id).hidden = true;
  $("file-status").textContent = `Uploading ${file.name} (${file.size.toLocaleString()} bytes)…`;
  const form = new FormData();
  form.append("file", file, file.name);
  try {
    const upload = await api("POST", "api/uploads", form);
    state.upload = upload;
    state.base = upload.suggestion?.definition ?? null;
    $("file-status").textContent =
      `${upload.fileName ?? file.name}: ${upload.headers.length} columns, read as ${upload.encoding}.`;
    showMapping(upload);
  } catch (err) {
    $("file-status").textContent = "";
    showProblem(err.message, err.problems);
  }
}

// 2. The mapping

function targetKey(to) {
  if (to === null || to === undefined) return "";
  if (typeof to === "string") return to;
  if (to.propertyId) return `property:${to.propertyId}`;
  return `named:${to.name}:${to.propertyType}`;
}
function targetOf(key) {
  if (key === "") return null;
  if (key.startsWith("property:")) return { propertyId: key.slice("property:".length) };
  if (key.startsWith("named:")) {
    const [, name, propertyType] = key.split(":");
    return { name, propertyType };
  }
  return key;
}

function meter(confidence) {
  const pct = Math.round(confidence * 100);
  const bar = el("span", undefined, { class: `meter${pct < 60 ? " low" : ""}`, "aria-hidden": "true" });
  bar.append(el("span", undefined, { style: `width:${pct}%` }));
  const cell = el("td");
  cell.append(bar, document.createTextNode(`${pct}%`));
  return cell;
}

function showMapping(upload) {
  const suggestion = upload.suggestion;
  const suggested = suggestion?.columns ?? [];
  const names = suggested.length ? suggested.map((c) => c.column) : upload.headers;
  const firstRows =
    suggestion && suggestion.header === false ? [upload.headers, ...upload.rows] : upload.rows;
  // A header written twice is told apart by its occurrence (job key columns[].occurrence).
  const key = (name) => String(name).trim().toLowerCase();
  const seen = new Map();
  const totals = new Map();
  for (const name of names) totals.set(key(name), (totals.get(key(name)) ?? 0) + 1);
  state.columns = names.map((column, index) => {
    const s = suggested[index];
    const nth = (seen.get(key(column)) ?? 0) + 1;
    seen.set(key(column), nth);
    return {
      column,
      occurrence: s?.occurrence ?? (totals.get(key(column)) > 1 ? nth : undefined),
      suggestedKey: targetKey(s?.to),
      suggestedTransforms: s?.transforms ?? [],
      confidence: s?.confidence ?? 0,
      why: s?.why ?? "none",
      note: s?.note ?? "",
      values: firstRows
        .map((r) => r[index] ?? "")
        .filter((v) => v !== "")
        .slice(0, 3),
    };
  });
  $("file-name").textContent = upload.fileName ?? "the file";
  const body = $("columns").querySelector("tbody");
  body.replaceChildren(
    ...state.columns.map((c, i) => {
      const row = el("tr");
      const label = c.occurrence ? `${c.column} (${c.occurrence})` : c.column;
      row.append(el("th", label, { scope: "row" }));
      row.append(el("td", c.values.join(" · "), { class: "muted" }));
      const select = el("select", undefined, { id: `target-${i}`, "aria-label": `Import ${label} as` });
      select.append(el("option", "Leave out", { value: "" }));
      for (const [value, label] of PERSON_FIELDS) select.append(el("option", label, { value }));
      if (c.suggestedKey.startsWith("property:") || c.suggestedKey.startsWith("named:")) {
        select.append(el("option", `Property ${c.suggestedKey.split(":")[1]}`, { value: c.suggestedKey }));
      }
      select.value = c.suggestedKey;
      select.addEventListener("change", refreshIdentifiers);
      const pick = el("td");
      pick.append(select);
      row.append(pick, meter(c.confidence), el("td", c.note || WHY[c.why] || c.why));
      return row;
    }),
  );
  const definition = suggestion?.definition ?? {};
  const study = definition.target?.studyId;
  $("study").value = study && study !== "CHANGE-ME" ? study : "";
  $("job-name").value = definition.name ?? "";
  $("phone-country").value = definition.phoneCountry ?? suggestion?.phoneCountry?.country ?? "";
  showSuggestionOutcome(suggestion);
  refreshIdentifiers(definition.target?.identifier);
  if (suggestion?.problems?.length) {
    $("mapping-status").textContent = `The suggestion is not complete: ${suggestion.problems
      .map((p) => p.message)
      .join("; ")}`;
  } else if (upload.suggestionError) {
    $("mapping-status").textContent = `No suggestion: ${upload.suggestionError}. Map the columns by hand.`;
  } else $("mapping-status").textContent = "";
  $("mapping").hidden = false;
}

/** What the suggestion found in the file's first rows: the phone country, the identifier, what a run would do. */
function showSuggestionOutcome(suggestion) {
  const lines = [];
  if (suggestion?.phoneCountry?.reason) lines.push(`Phone country: ${suggestion.phoneCountry.reason}`);
  if (suggestion?.identifier?.reason) lines.push(`Identifier: ${suggestion.identifier.reason}`);
  const o = suggestion?.outcome;
  if (o?.stopped) lines.push(`As suggested, the import would stop: ${o.stopped}`);
  else if (o) {
    const reasons = o.topReasons.map((r) => `${r.reason} (${r.rows})`).join("; ");
    lines.push(
      `Of the first ${o.rows} rows, ${o.imported} would be imported and ${o.rejected} rejected${
        reasons ? `: ${reasons}` : ""
      }. ${o.optedOut} would be opted out, ${o.heldBack} held back as "not opted out".`,
    );
    if (o.wouldRefuse)
      lines.push("A real run would refuse this file as mapped: most of its first rows are rejected.");
  }
  const box = $("suggestion-outcome");
  box.replaceChildren(...lines.map((line) => el("li", line)));
  box.hidden = lines.length === 0;
}

function chosenColumns() {
  return state.columns.map((c, i) => ({ ...c, key: $(`target-${i}`).value }));
}

/** Identifiers: email or phone when a column fills it, or a property a column fills. */
function refreshIdentifiers(wanted) {
  const select = $("identifier");
  const previous = typeof wanted === "string" ? wanted : select.value;
  const keys = new Set(chosenColumns().map((c) => c.key));
  const options = [];
  if (keys.has("email")) options.push(["email", "Email"]);
  if (keys.has("phone")) options.push(["phone", "Phone"]);
  for (const k of keys) if (k.startsWith("property:")) options.push([k, `Property ${k.slice(9)}`]);
  if (!options.length) options.push(["email", "Email (no column imported as email yet)"]);
  select.replaceChildren(...options.map(([value, label]) => el("option", label, { value })));
  if (options.some(([v]) => v === previous)) select.value = previous;
}

/** The job definition as the page shows it: the suggestion's, with the columns, identifier, study and name chosen here. */
function definition() {
  const base = structuredClone(state.base ?? { kind: "import" });
  // Every column is listed: a preset would map columns a person chose to leave out.
  delete base.preset;
  base.kind = base.kind ?? "import";
  base.columns = chosenColumns()
    .filter((c) => c.key !== "")
    .map((c) => ({
      column: c.column,
      ...(c.occurrence ? { occurrence: c.occurrence } : {}),
      to: targetOf(c.key),
      transforms: c.key === c.suggestedKey ? c.suggestedTransforms : (DEFAULT_TRANSFORMS[c.key] ?? []),
    }));
  base.target = {
    ...(base.target ?? {}),
    studyId: $("study").value.trim(),
    identifier: $("identifier").value,
  };
  const name = $("job-name").value.trim();
  if (name) base.name = name;
  else delete base.name;
  const country = $("phone-country").value.trim().toUpperCase();
  if (country) base.phoneCountry = country;
  else delete base.phoneCountry;
  return base;
}

function busy(on, message = "") {
  for (const id of ["preview-button", "dry-run-button", "run-button", "save-button"]) $(id).disabled = on;
  $("mapping-status").textContent = message;
}

// 3. Preview

function table(id, headers, rows) {
  const t = $(id);
  const head = el("tr");
  for (const h of headers) head.append(el("th", h, { scope: "col" }));
  t.querySelector("thead").replaceChildren(head);
  t.querySelector("tbody").replaceChildren(
    ...rows.map((cells) => {
      const tr = el("tr");
      for (const c of cells) tr.append(el("td", c));
      return tr;
    }),
  );
}

function counts(id, pairs) {
  $(id).replaceChildren(
    ...pairs.map(([label, value]) => {
      const box = el("div");
      box.append(el("strong", Number(value ?? 0).toLocaleString()), el("span", label, { class: "muted" }));
      return box;
    }),
  );
}

function shown(value) {
  if (value === undefined || value === null) return "";
  if (Array.isArray(value)) return value.map(shown).join(", ");
  if (typeof value === "object")
    return value.propertyId ? `${value.propertyId}=${value.value}` : JSON.stringify(value);
  return String(value);
}

async function preview() {
  clearProblem();
  busy(true, "Checking every row…");
  try {
    const p = await api("POST", `api/uploads/${state.upload.uploadId}/preview`, { definition: definition() });
    showPreview(p);
    busy(false, "");
    $("preview-title").scrollIntoView({ block: "start" });
  } catch (err) {
    busy(false, "");
    showProblem(err.message, err.problems);
  }
}

/** The preview: its counts, the first people as they would be sent, the first rejected rows. */
function showPreview(p) {
  counts("preview-counts", [
    ["rows read", p.report.rowsRead],
    ["would be imported", p.report.imported ?? p.report.updated],
    ["rejected", p.report.rejected],
    ["merged duplicates", p.report.duplicates],
    ["would be opted out", p.report.optedOut ?? 0],
    ["held back as not opted out", p.report.optInsHeldBack ?? 0],
  ]);
  const notes = [];
  if (p.report.wouldBeRefused) notes.push(`Careful: ${p.report.wouldBeRefused}`);
  if (p.report.unmappedColumns?.length) notes.push(`Not imported: ${p.report.unmappedColumns.join(", ")}.`);
  if (p.report.optInsHeldBack)
    notes.push(`${p.report.optInsHeldBack} rows saying "not opted out" are held back.`);
  for (const w of p.report.warnings ?? []) notes.push(w);
  $("preview-notes").textContent = notes.join(" ");
  const fields = [...new Set(p.sent.flatMap((s) => Object.keys(s.person ?? {})))];
  table(
    "sent",
    [...fields, "population"],
    p.sent.map((s) => [...fields.map((f) => shown(s.person[f])), s.population ?? ""]),
  );
  table(
    "rejected",
    ["row", "why", ...p.rejectedHeaders],
    p.rejected.map((r) => [String(r.row), r.reason, ...r.cells]),
  );
  $("rejected").querySelector("caption").textContent = p.rejected.length
    ? `Rows that would be rejected, and why (first ${p.rejected.length} of ${p.report.rejected})`
    : "No row would be rejected";
  $("preview").hidden = false;
}

// 4. Runs

async function run(dryRun) {
  clearProblem();
  busy(true, dryRun ? "Queueing a dry run…" : "Queueing the import…");
  try {
    const queued = await api("POST", `api/uploads/${state.upload.uploadId}/run`, {
      definition: definition(),
      dryRun,
    });
    busy(false, queued.duplicate ? "This file was already run with this mapping: showing that run." : "");
    $("run-title").textContent = dryRun ? "4. The dry run" : "4. The run";
    $("run").hidden = false;
    $("run-failure").hidden = true;
    $("rejects").hidden = true;
    $("rejects-again").hidden = true;
    $("run-id").textContent = `Job ${queued.jobId}`;
    // The last run's words and counts go: they are not this run's.
    $("run-state").textContent = "Queued…";
    $("run-message").textContent = "";
    $("run-projection").textContent = "";
    $("run-counts").replaceChildren();
    follow(queued.jobId);
  } catch (err) {
    busy(false, "");
    showProblem(err.message, err.problems);
  }
}

function follow(jobId) {
  state.running = jobId;
  const tick = async () => {
    if (state.running !== jobId) return;
    let status;
    try {
      status = await api("GET", `api/runs/imports/${encodeURIComponent(jobId)}`);
    } catch (err) {
      $("run-message").textContent = `Cannot ask for the run's state: ${err.message}`;
      setTimeout(tick, 3000);
      return;
    }
    showRun(jobId, status);
    if (!status.finished) setTimeout(tick, 1000);
  };
  tick();
}

function showRun(jobId, status) {
  const p = status.progress;
  const r = status.report;
  const dry = status.data?.dryRun;
  $("run-state").textContent = status.finished
    ? status.state === "completed"
      ? dry
        ? "Dry run finished: nothing was sent."
        : "Finished."
      : "Failed."
    : `${status.stateInWords[0].toUpperCase()}${status.stateInWords.slice(1)}…`;
  // A finished run's report and failure say it all; the worker's last word ("done") adds nothing.
  $("run-message").textContent = status.finished
    ? ""
    : (status.message ?? (p?.phase ? `phase: ${p.phase}` : ""));
  const bar = $("run-progress");
  bar.classList.toggle("failed", status.state === "failed");
  if (status.state === "failed") {
    // A failed run's bar shows how far it got, in the colour of a failure, never a full bar.
    const done = p && p.rowsRead > 0 ? Math.min(p.rowsRead, p.imported + p.rejected + p.duplicates) : 0;
    bar.max = Math.max(1, p?.rowsRead ?? 1);
    bar.value = done;
  } else if (status.finished) {
    bar.max = 1;
    bar.value = 1;
  } else if (p && p.bytesTotal > 0 && (p.phase === "hash" || p.phase === "read")) {
    bar.max = p.bytesTotal;
    bar.value = p.bytesRead;
  } else if (p?.phase === "send" && p.rowsRead > 0) {
    // Sending: every row read ends imported, rejected or merged into another.
    bar.max = p.rowsRead;
    bar.value = Math.min(p.rowsRead, p.imported + p.rejected + p.duplicates);
  } else bar.removeAttribute("value");
  const source = r ?? p;
  if (source) {
    counts("run-counts", [
      ["rows read", source.rowsRead],
      [dry ? "would be imported" : "imported", source.imported ?? source.updated],
      ["rejected", source.rejected],
      ["merged duplicates", source.duplicates],
      ["batches", source.batches],
      ["requests", source.requests],
    ]);
    const waited = el("div");
    waited.append(
      el("strong", duration(status.budgetWaitMs ?? 0)),
      el("span", "waited on the rate budget", { class: "muted" }),
    );
    $("run-counts").append(waited);
  }
  const projection = $("run-projection");
  if (status.finished) projection.textContent = "";
  else if (status.waitingUntil && Date.parse(status.waitingUntil) > Date.now())
    projection.textContent = `Paused for the rate budget until ${when(status.waitingUntil)}. ${
      status.projectedFinish ? `Should finish about ${when(status.projectedFinish)}.` : ""
    }`;
  else if (status.projectedFinish)
    projection.textContent = `Should finish about ${when(status.projectedFinish)}: ${status.projectionBasis}.`;
  else projection.textContent = status.projectionBasis ? `Finish ${status.projectionBasis}.` : "";
  if (status.state === "failed" && status.failure) {
    $("run-failure").textContent = status.failure.message ?? status.failure.failedReason ?? "the run failed";
    $("run-failure").hidden = false;
  }
  if (status.finished && status.rejectsFile) {
    const link = el("a", "Download the rejected rows (CSV)", {
      href: `api/runs/imports/${encodeURIComponent(jobId)}/rejects.csv`,
      download: "",
    });
    $("rejects").replaceChildren(link);
    $("rejects").hidden = false;
    // Only a real run's rejects are worth correcting and importing again with this mapping.
    $("rejects-again").hidden = Boolean(dry);
  }
}

// A corrected rejects file, dropped back in

/**
 * Uploads the corrected rejects file and checks it against the mapping on
 * the page: it must be a rejects file (the import then drops its own columns
 * and restores the cells), and the preview, a dry run with this mapping, must
 * find every column the mapping reads. Then Run imports it.
 */
async function uploadCorrected(file) {
  clearProblem();
  $("mapping-status").textContent = `Checking ${file.name} against the mapping…`;
  const form = new FormData();
  form.append("file", file, file.name);
  try {
    const upload = await api("POST", "api/uploads", form);
    if (!upload.rejectsFile) {
      $("mapping-status").textContent = "";
      showProblem(
        `${upload.fileName ?? file.name} is not a rejects file: its header does not start with _source_row,_reject_reason. Keep those columns first when you correct the rows, so that the import reads the cells as they were.`,
      );
      return;
    }
    const p = await api("POST", `api/uploads/${upload.uploadId}/preview`, { definition: definition() });
    state.upload = upload;
    $("file-status").textContent =
      `${upload.fileName ?? file.name}: the corrected rejects file, ${p.report.rowsRead} rows, with the mapping above.`;
    showPreview(p);
    $("run").hidden = true;
    $("mapping-status").textContent =
      `${upload.fileName ?? file.name} has the columns the mapping reads: ${p.report.imported ?? 0} of its ${p.report.rowsRead} rows would be imported, ${p.report.rejected} rejected again. Run it with "Run the import".`;
  } catch (err) {
    $("mapping-status").textContent = "";
    showProblem(`The corrected file does not fit the mapping: ${err.message}`, err.problems);
  }
}

// Save as job

async function save() {
  clearProblem();
  const name = $("job-name").value.trim();
  if (!name) {
    showProblem("Give the job a name first.", [
      { path: "name", message: "lower-case letters, digits and dashes" },
    ]);
    $("job-name").focus();
    return;
  }
  busy(true, "Saving…");
  try {
    const saved = await api("POST", "api/jobs", {
      name,
      definition: definition(),
      overwrite: $("overwrite").checked,
    });
    busy(false, `Saved as ${saved.file}${saved.overwritten ? " (replaced the job of that name)" : ""}.`);
  } catch (err) {
    busy(false, "");
    if (err.code === "ops_job_exists") {
      showProblem(`A job named ${name} exists already: tick "replace a job of that name" to replace it.`);
    } else showProblem(err.message, err.problems);
  }
}

// Recent runs and the rate budget

/** What a run did, in a few words: an import's counts, an export's rows. */
function reportInWords(run) {
  const r = run.report;
  if (!r) return "";
  if (r.kind === "import")
    return `${r.rowsRead} rows read, ${r.imported} ${r.dryRun ? "would be imported" : "imported"}, ${r.rejected} rejected`;
  if (r.kind === "opt-out") return `${r.rowsRead} rows read, ${r.updated} opted out, ${r.rejected} rejected`;
  if (r.totals) return `${r.totals.rows} rows exported in ${r.totals.requests} requests`;
  return "";
}

function showBudget(view) {
  const b = view.budget;
  const line = $("budget");
  if (!b) line.textContent = view.note ?? "No budget known.";
  else if (b.limit === null) line.textContent = view.note ?? "No answer from the service yet.";
  else if (b.pausedUntil)
    line.textContent = `Spent: no request goes out until the window resets at ${when(b.pausedUntil)}.`;
  else
    line.textContent = `${b.remaining ?? "?"} of ${b.limit} requests left in this window; it resets at ${
      b.resetAt ? when(b.resetAt) : "a time not known yet"
    }.`;
  fillRows("active-runs", [...view.running, ...view.waiting], "Nothing is running or waiting.", (run) => {
    const tr = el("tr");
    const p = run.progress;
    const progress =
      p?.kind === "import" && p.rowsRead > 0
        ? `${p.rowsRead} rows read, ${p.imported} imported, ${p.batches} batches`
        : (run.message ?? "");
    const pausedFor =
      run.waitingUntil && Date.parse(run.waitingUntil) > Date.now()
        ? `paused for the budget until ${when(run.waitingUntil)}`
        : run.stateInWords;
    const finish = run.projectedFinish ? `about ${when(run.projectedFinish)}` : run.projectionBasis;
    tr.append(
      el("th", `${run.name}${run.dryRun ? " (dry run)" : ""}`, { scope: "row" }),
      el("td", run.queue),
      el("td", pausedFor),
      el("td", progress),
      el("td", duration(run.budgetWaitMs)),
      el("td", finish),
    );
    return tr;
  });
}

/** A table's body: a row per item, or one muted line across every column when there is none. */
function fillRows(tableId, items, emptyText, toRow) {
  const table = $(tableId);
  const body = table.querySelector("tbody");
  if (!items.length) {
    const empty = el("tr");
    const columns = String(table.querySelectorAll("thead th").length);
    empty.append(el("td", emptyText, { colspan: columns, class: "muted" }));
    body.replaceChildren(empty);
    return;
  }
  body.replaceChildren(...items.map(toRow));
}

function showRecentRuns(runs) {
  const failed = runs.filter((r) => r.state === "failed");
  const byCode = new Map();
  for (const r of failed) {
    const code = r.failure?.code ?? "no code";
    const group = byCode.get(code) ?? { count: 0, latest: r };
    group.count++;
    byCode.set(code, group);
  }
  const codes = $("failure-codes");
  if (!byCode.size) codes.replaceChildren(el("li", "No failed run among the recent ones."));
  else
    codes.replaceChildren(
      ...[...byCode.entries()]
        .sort((a, b) => b[1].count - a[1].count)
        .map(([code, g]) => {
          const li = el("li");
          li.append(
            el("code", code),
            document.createTextNode(
              `: ${g.count} ${g.count === 1 ? "run" : "runs"}; the latest: ${g.latest.failure?.message ?? ""}`,
            ),
          );
          return li;
        }),
    );
  fillRows("recent-runs", runs, "No finished run kept.", (run) => {
    const tr = el("tr");
    const name = run.data?.job ?? run.data?.definition?.name ?? run.report?.job ?? run.data?.kind ?? "job";
    const outcome =
      run.state === "failed"
        ? el("td", `failed: ${run.failure?.code ?? "no code"}`, { class: "failed" })
        : el("td", run.report?.status === "skipped" ? "skipped (done before)" : "completed");
    const report = el("td", reportInWords(run));
    if (run.queue === "imports" && run.rejectsFile) {
      report.append(
        document.createTextNode(" · "),
        el("a", "rejects", {
          href: `api/runs/imports/${encodeURIComponent(run.id)}/rejects.csv`,
          download: "",
          "aria-label": `Download the rejected rows of ${name}`,
        }),
      );
    }
    tr.append(
      el("td", run.finishedAt ? new Date(run.finishedAt).toLocaleString() : ""),
      el("th", `${name}${run.data?.dryRun ? " (dry run)" : ""}`, { scope: "row" }),
      el("td", run.queue),
      outcome,
      report,
      el("td", duration(run.budgetWaitMs ?? 0)),
    );
    return tr;
  });
}

async function refreshQueues() {
  try {
    const [view, recent] = await Promise.all([api("GET", "api/budget"), api("GET", "api/runs?limit=20")]);
    showBudget(view);
    showRecentRuns(recent.runs ?? []);
    $("queues-status").textContent = "";
  } catch (err) {
    $("queues-status").textContent = `Cannot read the queues now: ${err.message}`;
  }
  setTimeout(refreshQueues, 5000);
}

// Wiring

/** A file box: its input's choice, or a file dropped on it. */
function fileBox(boxId, inputId, onFile) {
  const input = $(inputId);
  input.addEventListener("change", () => input.files[0] && onFile(input.files[0]));
  const box = $(boxId);
  box.addEventListener("dragover", (e) => {
    e.preventDefault();
    box.classList.add("over");
  });
  box.addEventListener("dragleave", () => box.classList.remove("over"));
  box.addEventListener("drop", (e) => {
    e.preventDefault();
    box.classList.remove("over");
    const file = e.dataTransfer?.files?.[0];
    if (file) onFile(file);
  });
}

fileBox("drop", "file", uploadFile);
fileBox("rejects-drop", "rejects-file", uploadCorrected);
$("preview-button").addEventListener("click", preview);
$("dry-run-button").addEventListener("click", () => run(true));
$("run-button").addEventListener("click", () => run(false));
$("save-button").addEventListener("click", save);
refreshQueues();
