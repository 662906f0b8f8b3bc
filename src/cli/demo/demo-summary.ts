import path from "node:path";
import { DEMO_DIR } from "./demo-config.ts";
import type { DemoResult } from "./run-demo.ts";
import { warehousePath } from "./warehouse-view.ts";
import { describeFiled, shortPath, topReasons } from "./way-watched-folder.ts";

/** Whether every way ended as it should: the exit code of the demo. */
export function demoSucceeded(demo: DemoResult): boolean {
  return (
    demo.watched.every((f) => f.outcome === "processed") &&
    demo.scheduled.state === "completed" &&
    demo.scheduled.report?.status === "succeeded" &&
    demo.byHand.state === "completed"
  );
}

/**
 * The demo's last screen: per way what ran and what came of it, where the
 * files are, the dashboard, and why a second run shows the same.
 */
export function formatDemoSummary(demo: DemoResult, options: { keepRunning?: boolean } = {}): string[] {
  const rel = (p: string) => shortPath(p);
  const lines = ["", `── demo summary (${(demo.wallMs / 1000).toFixed(1)} s) ──`];

  const processed = demo.watched.filter((f) => f.outcome === "processed").length;
  lines.push(
    `way 1  watched folder  ${demo.watched.length} sample files dropped into ${DEMO_DIR}/inbox/<job>/: ${processed} filed in processed/, ${demo.watched.length - processed} in failed/`,
  );
  for (const f of demo.watched) lines.push(`         ${f.name.padEnd(32)} ${describeFiled(f)}`);

  const s = demo.scheduled;
  const report = s.report;
  lines.push(
    `way 2  schedule        ${s.schedulerId} (cron "${s.pattern}" ${s.tz}) run now as job ${s.jobId}: ${
      s.state === "completed" && report
        ? `export ${report.status}`
        : `failed: ${s.failedReason ?? "see the dashboard"}`
    }`,
  );
  if (report) {
    const exported = Object.values(report.resources).reduce((n, r) => n + r.rows, 0);
    lines.push(
      `         ${exported} rows exported this run; per table: exported this run / live rows in the warehouse`,
    );
    for (const [table, r] of Object.entries(report.resources)) {
      lines.push(`         ${table.padEnd(20)} ${String(r.rows).padStart(6)} / ${demo.tables[table] ?? 0}`);
    }
  }

  const h = demo.byHand;
  const hr = h.report;
  lines.push(`way 3  by hand         ${h.command}`);
  lines.push(
    `         job ${h.jobId}: ${h.duplicate ? "already done, not enqueued again; " : ""}${
      h.state === "completed" && hr
        ? `${hr.kind === "import" ? `${hr.imported} imported` : `${hr.updated} opted out`}, ${hr.rejected} rejected${topReasons(hr.rejectedByReason)}${
            hr.kind === "import" && hr.status === "skipped" ? " (already imported: skipped)" : ""
          }`
        : `failed: ${h.failedReason ?? "see the dashboard"}`
    }`,
  );
  if (hr?.rejectsFile) lines.push(`         its rejects: ${rel(hr.rejectsFile)}`);

  const responses = demo.counters.responses.reduce((n, r) => n + r.count, 0);
  const limited = demo.counters.responses.filter((r) => r.status === 429).reduce((n, r) => n + r.count, 0);
  lines.push(
    `service  ${responses} requests to the emulator, ${limited} answered 429; ${demo.counters.budgetWaits} of them held by the shared rate budget (each run's wall-clock wait is in its report)`,
  );

  const inbox = path.join(demo.root, DEMO_DIR, "inbox");
  const where = warehousePath(demo.config.warehouse.url);
  lines.push(
    `files    ${rel(inbox)}/<job>/processed/ and failed/ — each file beside its .report.json and .rejects.csv`,
  );
  lines.push(
    `         warehouse ${where ? rel(where) : demo.config.warehouse.url.replace(/\/\/[^@/]*@/, "//***@")}`,
  );
  lines.push(
    `again    every run starts a fresh seeded emulator and Redis prefix and clears ${DEMO_DIR}/, so it imports`,
    "         the samples anew and a second run shows this same summary; the email cursor an earlier run left",
    "         in the warehouse belongs to an emulator that is gone: it is removed before the export, rows kept.",
    '         A file dropped twice within one run is filed in processed/ as "already imported", not failed.',
  );
  lines.push(
    options.keepRunning
      ? `dashboard ${demo.dashboardUrl} (no login: loopback only) — emulator, worker and dashboard stay up; Ctrl-C stops them`
      : `dashboard ${demo.dashboardUrl} was up during the run; 'npm run demo -- --keep-running' keeps it up to browse`,
  );
  return lines;
}
