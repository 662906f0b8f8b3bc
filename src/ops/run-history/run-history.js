// The run history page: recent runs per job, their alert states and sparklines of duration and rejects.
// Reads GET api/run-history; every value is set as text, never as markup; the SVG is built node by node.

const SVG = "http://www.w3.org/2000/svg";
const REFRESH_MS = 10_000;

const $ = (id) => document.getElementById(id);

function el(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (className) node.className = className;
  return node;
}

function seconds(ms) {
  if (ms === null || ms === undefined) return "–";
  return ms < 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`;
}

function count(n) {
  return n === null || n === undefined ? "–" : n.toLocaleString("en");
}

function when(iso) {
  if (!iso) return "–";
  const d = new Date(iso);
  return `${d.toLocaleDateString("en-CA")} ${d.toLocaleTimeString("en-GB")}`;
}

/** A line through the values, oldest left, scaled to the largest; one dot at the latest. */
function sparkline(values, label, color) {
  const width = 120;
  const height = 28;
  const pad = 3;
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("width", String(width));
  svg.setAttribute("height", String(height));
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", label);
  const title = document.createElementNS(SVG, "title");
  title.textContent = label;
  svg.appendChild(title);
  if (values.length === 0) return svg;
  const max = Math.max(...values, 1);
  const x = (i) => (values.length === 1 ? width / 2 : pad + (i * (width - 2 * pad)) / (values.length - 1));
  const y = (v) => height - pad - (v / max) * (height - 2 * pad);
  const line = document.createElementNS(SVG, "polyline");
  line.setAttribute("points", values.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(" "));
  line.setAttribute("fill", "none");
  line.setAttribute("stroke", color);
  line.setAttribute("stroke-width", "1.5");
  svg.appendChild(line);
  const last = document.createElementNS(SVG, "circle");
  last.setAttribute("cx", x(values.length - 1).toFixed(1));
  last.setAttribute("cy", y(values[values.length - 1]).toFixed(1));
  last.setAttribute("r", "2.5");
  last.setAttribute("fill", color);
  svg.appendChild(last);
  return svg;
}

function badge(alert, withSubject) {
  const item = el("li", null, `badge ${alert.state} ${alert.severity ?? ""}`);
  const what = withSubject ? `${alert.rule} (${alert.subject})` : alert.rule;
  item.textContent = alert.state === "firing" ? `${what}: firing since ${when(alert.since)}` : `${what}: ok`;
  if (alert.title) item.title = alert.title;
  return item;
}

const STATE_WORDS = { completed: "completed", failed: "failed", skipped: "skipped" };

function runRow(run) {
  const tr = el("tr");
  tr.appendChild(el("td", when(run.finishedAt)));
  const status = el("td", STATE_WORDS[run.state] ?? run.state, run.state === "completed" ? "" : run.state);
  if (run.code) status.textContent += ` (${run.code})`;
  if (run.dryRun) status.textContent += ", dry run";
  tr.appendChild(status);
  tr.appendChild(el("td", seconds(run.durationMs), "num"));
  tr.appendChild(el("td", count(run.rows), "num"));
  tr.appendChild(el("td", count(run.rejected), "num"));
  tr.appendChild(el("td", seconds(run.budgetWaitMs), "num"));
  tr.appendChild(el("td", run.origin ?? "–"));
  return tr;
}

function jobSection(job) {
  const section = el("section");
  section.setAttribute("data-job", job.job);
  const head = el("div", null, "job-head");
  const h2 = el("h2", job.job);
  h2.appendChild(el("span", ` · ${job.queue}`, "muted"));
  head.appendChild(h2);
  const sparks = el("div", null, "sparks");
  const durations = job.series.durationMs;
  const rejects = job.series.rejected;
  const dFig = el("figure");
  dFig.appendChild(el("figcaption", "duration"));
  dFig.appendChild(
    sparkline(
      durations,
      `duration of the last ${durations.length} runs, oldest first: ${durations.map(seconds).join(", ")}`,
      "#1f5fbf",
    ),
  );
  sparks.appendChild(dFig);
  if (job.queue === "imports") {
    const rFig = el("figure");
    rFig.appendChild(el("figcaption", "rejects"));
    rFig.appendChild(
      sparkline(
        rejects,
        `rejected rows of the last ${rejects.length} runs, oldest first: ${rejects.join(", ")}`,
        "#a4262c",
      ),
    );
    sparks.appendChild(rFig);
  }
  head.appendChild(sparks);
  section.appendChild(head);
  if (job.alerts.length) {
    const list = el("ul", null, "badges");
    for (const a of job.alerts) list.appendChild(badge(a, false));
    section.appendChild(list);
  }
  const table = el("table");
  const thead = el("thead");
  const hr = el("tr");
  for (const [label, cls] of [
    ["finished", ""],
    ["status", ""],
    ["duration", "num"],
    ["rows", "num"],
    ["rejected", "num"],
    ["waited on the budget", "num"],
    ["from", ""],
  ]) {
    const th = el("th", label, cls);
    th.scope = "col";
    hr.appendChild(th);
  }
  thead.appendChild(hr);
  table.appendChild(thead);
  const tbody = el("tbody");
  for (const run of job.runs) tbody.appendChild(runRow(run));
  table.appendChild(tbody);
  section.appendChild(table);
  return section;
}

async function load() {
  const res = await fetch("api/run-history", { headers: { accept: "application/json" } });
  const body = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(body.message || `the ops server answered ${res.status}`);
  return body;
}

function show(history) {
  $("problem").hidden = true;
  const fleet = $("fleet-alerts");
  fleet.replaceChildren(...history.fleetAlerts.map((a) => badge(a, true)));
  $("fleet-none").hidden = history.fleetAlerts.length > 0;
  $("jobs").replaceChildren(...history.jobs.map(jobSection));
  $("empty").hidden = history.jobs.length > 0;
  document.body.setAttribute("data-loaded", "true");
}

async function refresh() {
  try {
    show(await load());
  } catch (err) {
    $("problem-message").textContent = `The run history could not be read: ${err.message}`;
    $("problem").hidden = false;
  }
}

refresh();
setInterval(refresh, REFRESH_MS);
