import type { JobProgress } from "../../queue/job-progress.ts";

const n = (v: number) => v.toLocaleString("en-US");

/** "12:04:31" in local time: when a wait on the rate budget ends. */
export function clockTime(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toTimeString().slice(0, 8);
}

/** The rate-budget part of a line: time spent waiting so far, and the resume time while waiting. */
export function budgetNote(p: JobProgress, now = Date.now()): string {
  const parts: string[] = [];
  if (p.budgetWaitMs) parts.push(`${(p.budgetWaitMs / 1000).toFixed(1)} s waiting on the rate budget`);
  if (p.waitingUntil && Date.parse(p.waitingUntil) > now) {
    parts.push(`waiting for the rate budget until ${clockTime(p.waitingUntil)}`);
  }
  return parts.length ? `, ${parts.join(", ")}` : "";
}

/**
 * Percent done: of the file's bytes while hashing and reading, of the rows
 * left to send (read less rejected and merged) while sending.
 */
export function importPercent(p: {
  phase: string;
  bytesRead: number;
  bytesTotal: number;
  rowsRead: number;
  imported: number;
  rejected: number;
  duplicates: number;
}): number | undefined {
  if (p.phase === "done") return 100;
  if (p.phase === "send" || p.phase === "rejects") {
    const toSend = p.rowsRead - p.rejected - p.duplicates;
    return toSend > 0 ? Math.min(100, Math.floor((p.imported / toSend) * 100)) : undefined;
  }
  if (!p.bytesTotal) return undefined;
  return Math.min(100, Math.floor((p.bytesRead / p.bytesTotal) * 100));
}

/** One plain line for a run's progress, as printed when the output is not a terminal. */
export function progressLine(
  state: string,
  p: JobProgress | undefined,
  now = Date.now(),
  dryRun = false,
): string {
  if (!p || p.kind === "pending") return `${state}${p?.message ? `: ${p.message}` : ""}`;
  const wait = budgetNote(p, now);
  // The message repeats the resume time the budget note already gives.
  const note = p.message && p.message !== "done" && !p.waitingUntil ? ` — ${p.message}` : "";
  if (p.kind === "import") {
    const pct = importPercent(p);
    return `${state}: ${p.phase}${pct === undefined ? "" : ` ${pct}%`}, ${n(p.rowsRead)} rows read, ${dryRun ? `would import ${n(p.imported)}` : `${n(p.imported)} imported`}, ${n(p.rejected)} rejected, ${n(p.batches)} batches${wait}${note}`;
  }
  const parts = Object.entries(p.resources).map(
    ([r, s]) => `${r} ${n(s.rows)} rows/${n(s.pages)} pages (${s.status})`,
  );
  return `${state}: ${parts.join(", ") || "starting"}${wait}${note}`;
}
