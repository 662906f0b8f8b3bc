import type { JobProgress } from "../../queue/job-progress.ts";
import { budgetNote, importPercent } from "./progress-line.ts";

const n = (v: number) => v.toLocaleString("en-US");

function bytes(v: number): string {
  if (v < 1024) return `${v} B`;
  if (v < 1024 * 1024) return `${(v / 1024).toFixed(1)} KiB`;
  if (v < 1024 ** 3) return `${(v / 1024 / 1024).toFixed(1)} MiB`;
  return `${(v / 1024 ** 3).toFixed(2)} GiB`;
}

/** `[#####-----]` for a fraction; `[<=>      ]` moving when the total is unknown. */
export function bar(percent: number | undefined, width: number, tick = 0): string {
  if (percent === undefined) {
    const at = tick % Math.max(1, width - 2);
    return `[${" ".repeat(at)}<=>${" ".repeat(Math.max(0, width - 3 - at))}]`;
  }
  const full = Math.round((percent / 100) * width);
  return `[${"#".repeat(full)}${"-".repeat(width - full)}]`;
}

/**
 * The lines a terminal shows for a run, redrawn in place: a bar with the
 * phase and counts for an import, a line per resource for an export.
 */
export function barLines(
  state: string,
  p: JobProgress | undefined,
  tick = 0,
  now = Date.now(),
  dryRun = false,
): string[] {
  if (!p || p.kind === "pending") return [`${state}${p?.message ? `: ${p.message}` : ""}`];
  const wait = budgetNote(p, now).replace(/^, /, "");
  const note = p.message && p.message !== "done" && !p.waitingUntil ? p.message : "";
  const tail = [wait, note].filter(Boolean);
  if (p.kind === "import") {
    const pct = importPercent(p);
    const sending = p.phase === "send" || p.phase === "rejects";
    // While sending, the bytes are all read: the rows sent are what moves.
    const size = sending ? "" : `  ${bytes(p.bytesRead)}/${bytes(p.bytesTotal)}`;
    const head = `${state} ${p.phase.padEnd(7)} ${bar(pct, 24, tick)} ${pct === undefined ? "    " : `${String(pct).padStart(3)}%`}${size}`;
    const counts = `  rows ${n(p.rowsRead)}  ${dryRun ? "would import" : "imported"} ${n(p.imported)}  rejected ${n(p.rejected)}  batches ${n(p.batches)}  requests ${n(p.requests)}`;
    return [head, counts, ...tail.map((t) => `  ${t}`)];
  }
  const names = Object.keys(p.resources);
  const width = Math.max(9, ...names.map((r) => r.length));
  const rows = Object.entries(p.resources).map(([r, s]) => {
    const spin =
      s.status === "running"
        ? bar(undefined, 10, tick)
        : s.status === "succeeded"
          ? "[done]    "
          : `[${s.status}]`;
    return `  ${r.padEnd(width)} ${spin.padEnd(12)} pages ${n(s.pages).padStart(6)}  rows ${n(s.rows).padStart(9)}`;
  });
  const total = Object.values(p.resources).reduce(
    (a, s) => ({ rows: a.rows + s.rows, pages: a.pages + s.pages }),
    {
      rows: 0,
      pages: 0,
    },
  );
  return [
    // Inline runs are labelled "export" already; a followed job's label is its queue state.
    `${state === "export" ? "export" : `${state} export`}: ${n(total.pages)} pages, ${n(total.rows)} rows${rows.length ? "" : " (starting)"}`,
    ...rows,
    ...tail.map((t) => `  ${t}`),
  ];
}
