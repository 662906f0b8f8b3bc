// Recent runs of both queues and the shared rate budget, refreshed every 5 seconds.
import { BudgetAnswer, type BudgetRun, RecentRuns, type RunView } from "../api-contract.ts";
import { isDryRun, runName } from "../run-label.ts";
import { call, reasonOf } from "./api.ts";
import { box, el, fillRows, setHead } from "./dom.ts";
import { ahead, duration, reportInWords, reportOf, when } from "./words.ts";

function budgetInWords(view: BudgetAnswer): string {
  const b = view.budget;
  if (!b) return view.note ?? "No budget known.";
  if (b.limit === null) return view.note ?? "No answer from the service yet.";
  if (b.pausedUntil) return `Spent: no request goes out until the window resets at ${when(b.pausedUntil)}.`;
  return `${b.remaining ?? "?"} of ${b.limit} requests left in this window; it resets at ${
    b.resetAt ? when(b.resetAt) : "a time not known yet"
  }.`;
}

function activeRow(run: BudgetRun): HTMLElement {
  const rows = run.model.rows;
  const progress =
    run.model.kind === "import" && rows && rows.read > 0
      ? `${rows.read} rows read, ${rows.imported} imported, ${run.model.batches?.sent ?? 0} batches`
      : (run.message ?? "");
  const state = ahead(run.waitingUntil)
    ? `paused for the budget until ${when(run.waitingUntil)}`
    : run.stateInWords;
  const finish = run.projectedFinish ? `about ${when(run.projectedFinish)}` : run.projectionBasis;
  const tr = el("tr");
  tr.append(
    el("th", `${run.name}${run.dryRun ? " (dry run)" : ""}`, { scope: "row" }),
    el("td", run.queue),
    el("td", state),
    el("td", progress),
    el("td", duration(run.budgetWaitMs)),
    el("td", finish),
  );
  return tr;
}

function showBudget(view: BudgetAnswer): void {
  box("budget").textContent = budgetInWords(view);
  fillRows("active-runs", [...view.running, ...view.waiting], "Nothing is running or waiting.", activeRow);
}

/** The failures of the recent runs, grouped by their code: how many, and the latest message. */
function showFailures(runs: readonly RunView[]): void {
  const byCode = new Map<string, { count: number; latest: RunView }>();
  for (const r of runs) {
    if (r.state !== "failed") continue;
    const code = r.failure?.code ?? "no code";
    const group = byCode.get(code) ?? { count: 0, latest: r };
    group.count++;
    byCode.set(code, group);
  }
  const list = box("failure-codes");
  if (!byCode.size) {
    list.replaceChildren(el("li", "No failed run among the recent ones."));
    return;
  }
  list.replaceChildren(
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
}

function recentRow(run: RunView): HTMLElement {
  const report = reportOf(run.report);
  const name = runName(run.data, report);
  const outcome =
    run.state === "failed"
      ? el("td", `failed: ${run.failure?.code ?? "no code"}`, { class: "failed" })
      : el("td", report?.status === "skipped" ? "skipped (done before)" : "completed");
  const words = el("td", reportInWords(report));
  if (run.queue === "imports" && run.rejectsFile && run.id) {
    words.append(
      document.createTextNode(" · "),
      el("a", "rejects", {
        href: `api/runs/imports/${encodeURIComponent(run.id)}/rejects.csv`,
        download: "",
        "aria-label": `Download the rejected rows of ${name}`,
      }),
    );
  }
  const tr = el("tr");
  tr.append(
    el("td", run.finishedAt ? new Date(run.finishedAt).toLocaleString() : ""),
    el("th", `${name}${isDryRun(run.data) ? " (dry run)" : ""}`, { scope: "row" }),
    el("td", run.queue),
    outcome,
    words,
    el("td", duration(run.budgetWaitMs)),
  );
  return tr;
}

/** The tables' header rows, before their first rows. */
export function setQueueHeads(): void {
  setHead("active-runs", ["Job", "Queue", "State", "Progress", "Waited on the budget", "Should finish"]);
  setHead("recent-runs", ["Finished", "Job", "Queue", "Outcome", "Report", "Waited on the budget"]);
}

/** Reads the budget and the recent runs now, and again in 5 seconds. */
export async function refreshQueues(): Promise<void> {
  try {
    const [view, recent] = await Promise.all([
      call(BudgetAnswer, "GET", "api/budget"),
      call(RecentRuns, "GET", "api/runs?limit=20"),
    ]);
    showBudget(view);
    showFailures(recent.runs);
    fillRows("recent-runs", recent.runs, "No finished run kept.", recentRow);
    box("queues-status").textContent = "";
  } catch (err) {
    box("queues-status").textContent = `Cannot read the queues now: ${reasonOf(err).message}`;
  }
  setTimeout(() => void refreshQueues(), 5000);
}
