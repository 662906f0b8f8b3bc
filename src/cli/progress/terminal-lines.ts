import type { ProgressModel } from "../../queue/progress-model.ts";
import { budgetNote, finishNote } from "./plain-line.ts";

const n = (v: number) => v.toLocaleString("en-US");

function bytes(v: number): string {
  if (v < 1024) return `${v} B`;
  if (v < 1024 * 1024) return `${(v / 1024).toFixed(1)} KiB`;
  if (v < 1024 ** 3) return `${(v / 1024 / 1024).toFixed(1)} MiB`;
  return `${(v / 1024 ** 3).toFixed(2)} GiB`;
}

/** One line of the terminal view: words only, or words around a bar filled to `fraction` (0–1). */
export type TerminalLine =
  | { text: string }
  | { before: string; fraction: number; after: string; barWidth?: number };

const RESOURCE_WORDS = {
  running: "running",
  succeeded: "done",
  failed: "failed",
  interrupted: "interrupted",
};

/** What the run is doing and how long it has left; below it, once the run has waited, the rate budget. */
function doingLines(m: ProgressModel): TerminalLine[] {
  const message = m.message && m.kind !== "pending" ? ` — ${m.message}` : "";
  const budget = budgetNote(m);
  return [
    { text: `  ${[m.doing, ...finishNote(m)].join(", ")}${message}` },
    ...(budget.length ? [{ text: `  ${budget.join(", ")}` }] : []),
  ];
}

/**
 * The lines a terminal shows for a run: for an import a bar with the phase,
 * the counts, and what it is doing; for an export the totals, what it is
 * doing, and a bar per resource that fills when the resource is done.
 */
export function terminalLines(m: ProgressModel): TerminalLine[] {
  if (m.kind === "pending") {
    const wait = budgetNote(m).map((t) => `, ${t}`);
    return [{ text: `${m.state}${m.message ? `: ${m.message}` : ""}${wait.join("")}` }];
  }
  if (m.kind === "import") {
    const pct = m.percent === null ? "    " : `${String(m.percent).padStart(3)}%`;
    const sending = m.phase === "send" || m.phase === "rejects";
    // While sending, the bytes are all read: the rows sent are what moves.
    const size = sending || !m.bytes ? "" : `  ${bytes(m.bytes.read)}/${bytes(m.bytes.total)}`;
    const rows = m.rows ?? { read: 0, imported: 0, rejected: 0 };
    return [
      {
        before: `${m.state} ${(m.phase ?? "").padEnd(7)} `,
        fraction: (m.percent ?? 0) / 100,
        after: ` ${pct}${size}`,
      },
      {
        text: `  rows ${n(rows.read)}  ${m.dryRun ? "would import" : "imported"} ${n(rows.imported)}  rejected ${n(rows.rejected)}  batches ${n(m.batches?.sent ?? 0)}  requests ${n(m.requests)}`,
      },
      ...doingLines(m),
    ];
  }
  const totals = m.totals ?? { pages: 0, rows: 0 };
  const width = Math.max(9, ...m.resources.map((r) => r.name.length));
  return [
    // Inline runs are labelled "export" already; a followed job's label is its queue state.
    {
      text: `${m.state === "export" ? "export" : `${m.state} export`}: ${n(totals.pages)} pages, ${n(totals.rows)} rows`,
    },
    ...doingLines(m),
    ...m.resources.map((r) => ({
      before: `  ${r.name.padEnd(width)} `,
      fraction: r.status === "succeeded" ? 1 : 0,
      // Narrower than an import's bar: a line per resource must fit 80 columns with the longest name.
      barWidth: 12,
      after: ` ${RESOURCE_WORDS[r.status].padEnd(8)} pages ${n(r.pages).padStart(5)}  rows ${n(r.rows).padStart(8)}`,
    })),
  ];
}
