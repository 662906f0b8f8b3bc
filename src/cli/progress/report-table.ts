import type { ImportReport, OptOutReport } from "../../imports/index.ts";

const n = (v: number) => v.toLocaleString("en-US");

/**
 * Columns right-aligned under their heads (the first left-aligned when it
 * names things), two spaces apart, indented like the summaries.
 */
export function table(head: string[], rows: string[][], firstIsName = false): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    `  ${cells.map((c, i) => (i === 0 && firstIsName ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join("  ")}`;
  return [line(head), ...rows.map(line)].join("\n");
}

/**
 * The final table of an import or opt-out run: its counts in one row, then
 * the rejected rows by reason. No personal data: counts and reason codes only.
 */
export function importReportTable(r: ImportReport | OptOutReport, budgetWaitMs = 0): string {
  const done = r.kind === "import" ? r.imported : r.updated;
  const doneHead =
    r.kind === "import" ? (r.dryRun ? "would import" : "imported") : r.dryRun ? "would update" : "updated";
  const batches = r.kind === "import" ? n(r.batches) : "-";
  const counts = table(
    [
      "rows read",
      doneHead,
      "rejected",
      "merged",
      "batches",
      "requests",
      "seconds",
      "rows/s",
      "budget wait s",
    ],
    [
      [
        n(r.rowsRead),
        n(done),
        n(r.rejected),
        n(r.duplicates),
        batches,
        n(r.requests),
        (r.durationMs / 1000).toFixed(1),
        n(r.rowsPerSecond),
        (budgetWaitMs / 1000).toFixed(1),
      ],
    ],
  );
  const reasons = Object.entries(r.rejectedByReason).sort((a, b) => b[1] - a[1]);
  if (!reasons.length) return counts;
  const shown = reasons.slice(0, 10).map(([reason, rows]) => [reason, n(rows)]);
  if (reasons.length > 10) {
    const rest = reasons.slice(10).reduce((a, [, rows]) => a + rows, 0);
    shown.push([`(${reasons.length - 10} more reasons)`, n(rest)]);
  }
  return `${counts}\n${table(["rejected because", "rows"], shown, true)}`;
}
