import type { JobHistory, RunHistory, RunSummary } from "../alerts/index.ts";

const BLOCKS = "▁▂▃▄▅▆▇█";

/** Values as a line of block characters, oldest left, scaled to the largest. */
export function sparkText(values: readonly number[]): string {
  const max = Math.max(...values, 1);
  return values
    .map((v) => BLOCKS[Math.min(BLOCKS.length - 1, Math.round((v / max) * (BLOCKS.length - 1)))])
    .join("");
}

const seconds = (ms: number | null) =>
  ms === null ? "–" : ms < 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`;
const count = (n: number | null) => (n === null ? "–" : n.toLocaleString("en"));
/** `2026-11-28 17:40:12`, in UTC as every log line of ours. */
const when = (iso: string | null) => (iso ? iso.replace("T", " ").slice(0, 19) : "–");

function status(run: RunSummary): string {
  const base = run.code ? `${run.state} (${run.code})` : run.state;
  return run.dryRun ? `${base}, dry run` : base;
}

function table(rows: string[][]): string[] {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length))) ?? [];
  // Numbers right-aligned, words left: columns 2–5 are the figures.
  return rows.map((r) =>
    r
      .map((cell, i) => (i >= 2 && i <= 5 ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd(),
  );
}

function jobBlock(job: JobHistory): string[] {
  const lines = [`${job.job} (${job.queue})`];
  const spark = [`  duration ${sparkText(job.series.durationMs)}`];
  if (job.queue === "imports") spark.push(`rejects ${sparkText(job.series.rejected)}`);
  lines.push(spark.join("   "));
  for (const a of job.alerts) {
    lines.push(
      `  alert ${a.rule}: ${a.state === "firing" ? `FIRING since ${when(a.since)} (${a.severity ?? "?"}) ${a.title ?? ""}`.trimEnd() : "ok"}`,
    );
  }
  const rows = [
    ["finished (UTC)", "status", "duration", "rows", "rejected", "budget wait", "from"],
    ...job.runs.map((r) => [
      when(r.finishedAt),
      status(r),
      seconds(r.durationMs),
      count(r.rows),
      count(r.rejected),
      seconds(r.budgetWaitMs),
      r.origin ?? "–",
    ]),
  ];
  lines.push(...table(rows).map((l) => `  ${l}`));
  return lines;
}

/** The run history for a terminal: per job its sparklines, alert states and runs, newest first. */
export function formatRunHistory(history: RunHistory, job?: string): string {
  const out: string[] = [];
  for (const a of history.fleetAlerts) {
    if (a.state === "firing")
      out.push(`alert ${a.rule} (${a.subject}): FIRING since ${when(a.since)} ${a.title ?? ""}`.trimEnd());
  }
  if (out.length) out.push("");
  if (history.jobs.length === 0) {
    out.push(
      job
        ? `no finished runs of ${job} in Redis (the queues keep queue.keepCompleted completed and queue.keepFailed failed jobs)`
        : "no finished runs in Redis yet",
    );
  }
  history.jobs.forEach((j, i) => {
    if (i > 0) out.push("");
    out.push(...jobBlock(j));
  });
  return `${out.join("\n")}\n`;
}
