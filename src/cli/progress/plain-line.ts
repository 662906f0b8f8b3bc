import { type AnyProgress, type ProgressModel, progressModel } from "../../queue/progress-model.ts";

const n = (v: number) => v.toLocaleString("en-US");

/** "12:04:31" in local time: when a wait on the rate budget ends, when a run should finish. */
export function clockTime(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toTimeString().slice(0, 8);
}

/** The rate-budget part of a line: time spent waiting so far, and the resume time while waiting. */
export function budgetNote(m: ProgressModel): string[] {
  const parts: string[] = [];
  if (m.budgetWaitMs) parts.push(`${(m.budgetWaitMs / 1000).toFixed(1)} s waiting on the rate budget`);
  if (m.waitingUntil) parts.push(`waiting for the rate budget until ${clockTime(m.waitingUntil)}`);
  return parts;
}

/** The projected finish, in words, while an import sends; nothing while it is unknown. */
export function finishNote(m: ProgressModel): string[] {
  return m.projectedFinish && m.phase === "send" ? [`finishing about ${clockTime(m.projectedFinish)}`] : [];
}

/** An import's counts as one phrase: "7,000 rows read, 0 imported, 12 rejected, 0 batches". */
function importCounts(m: ProgressModel): string {
  const rows = m.rows ?? { read: 0, imported: 0, rejected: 0 };
  const done = m.dryRun ? `would import ${n(rows.imported)}` : `${n(rows.imported)} imported`;
  return `${n(rows.read)} rows read, ${done}, ${n(rows.rejected)} rejected, ${n(m.batches?.sent ?? 0)} batches`;
}

/** One plain line of a run's progress, as printed when the output is not a terminal. */
export function plainLine(m: ProgressModel): string {
  const tail = budgetNote(m)
    .map((t) => `, ${t}`)
    .join("");
  const note = m.message ? ` — ${m.message}` : "";
  if (m.kind === "pending") return `${m.state}${m.message ? `: ${m.message}` : ""}${tail}`;
  if (m.kind === "import") {
    const pct = m.percent === null ? "" : ` ${m.percent}%`;
    const finish = finishNote(m)
      .map((t) => `, ${t}`)
      .join("");
    return `${m.state}: ${m.phase}${pct}, ${importCounts(m)}${finish}${tail}${note}`;
  }
  const parts = m.resources.map((r) => `${r.name} ${n(r.rows)} rows/${n(r.pages)} pages (${r.status})`);
  return `${m.state}: ${parts.join(", ") || "starting"}${tail}${note}`;
}

/** A job's progress as one plain line: its state in plain words, then the counts. */
export function progressLine(
  state: string,
  progress: AnyProgress | undefined,
  now = Date.now(),
  dryRun = false,
): string {
  return plainLine(progressModel({ state, progress, now, dryRun }));
}
