import { existsSync } from "node:fs";
import { copyFile, readFile, rename } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import type { RuntimeConfig } from "../../config/index.ts";
import { RecruitSyncError } from "../../errors/index.ts";
import { ImportReport, OptOutReport } from "../../imports/index.ts";
import { WATCH_SUBFOLDERS } from "../../queue/index.ts";
import { DEMO_SAMPLES } from "./demo-config.ts";

/** What the worker writes beside a filed file (see src/queue/watched-files.ts). */
const FiledReport = z.looseObject({
  jobId: z.string().optional(),
  /** Set when the same bytes were already taken: the file was not imported again. */
  duplicateOf: z.string().optional(),
  message: z.string().optional(),
  failure: z.looseObject({ code: z.string().optional(), message: z.string() }).optional(),
  report: z.unknown().optional(),
});

export interface FiledSample {
  job: string;
  name: string;
  outcome: "processed" | "failed";
  /** The filed file: <watched folder>/processed/<name> or failed/<name>. */
  filedAt: string;
  jobId: string | undefined;
  /** Set when the worker found the same bytes already taken: not imported again. */
  alreadyTaken: string | undefined;
  failure: string | undefined;
  report: ImportReport | OptOutReport | undefined;
}

async function waitForFiling(
  folder: string,
  name: string,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<{ outcome: "processed" | "failed"; file: string }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    signal?.throwIfAborted();
    for (const outcome of ["processed", "failed"] as const) {
      const file = path.join(folder, WATCH_SUBFOLDERS[outcome], name);
      if (existsSync(file)) return { outcome, file };
    }
    if (Date.now() > deadline) {
      throw new RecruitSyncError(
        "job_failed",
        `${name} dropped into ${folder} was not filed in processed/ or failed/ within ${Math.round(timeoutMs / 1000)} s: see data/demo/demo.log and the dashboard`,
      );
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Way 1, the watched folder: drops each sample into its job's folder, the
 * way a person or a CRM's nightly drop would, and waits until the worker has
 * filed it in processed/ or failed/ beside its report. One file at a time,
 * so the opt-out list meets the people the HubSpot file brought in.
 */
export async function runWatchedFolderWay(
  config: RuntimeConfig,
  root: string,
  out: (line: string) => void,
  options: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<FiledSample[]> {
  const filed: FiledSample[] = [];
  for (const sample of DEMO_SAMPLES) {
    const watched = config.watch.find((w) => w.job === sample.job);
    if (!watched) throw new Error(`the demo's configuration watches no folder for ${sample.job}`);
    const name = path.basename(sample.file);
    // Copied under a dot-name and renamed: the watcher never takes a half-written file.
    const hidden = path.join(watched.folder, `.${name}.part`);
    await copyFile(path.join(root, sample.file), hidden);
    await rename(hidden, path.join(watched.folder, name));
    out(`  dropped ${sample.file} into ${shortPath(watched.folder)}/`);
    const where = await waitForFiling(watched.folder, name, options.timeoutMs ?? 120_000, options.signal);
    const raw = FiledReport.parse(JSON.parse(await readFile(`${where.file}.report.json`, "utf8")));
    const parsed = ImportReport.or(OptOutReport).safeParse(where.outcome === "processed" ? raw : raw.report);
    const entry: FiledSample = {
      job: sample.job,
      name,
      outcome: where.outcome,
      filedAt: where.file,
      jobId: raw.jobId ?? raw.duplicateOf,
      alreadyTaken: raw.duplicateOf ? (raw.message ?? `already taken as job ${raw.duplicateOf}`) : undefined,
      failure: raw.failure?.message,
      report: parsed.success ? parsed.data : undefined,
    };
    filed.push(entry);
    out(`  filed in ${shortPath(where.file)}: ${describeFiled(entry)}`);
  }
  return filed;
}

/** One line per filed sample: what came of it. */
export function describeFiled(f: FiledSample): string {
  if (f.alreadyTaken) return `already imported, not again (${f.alreadyTaken})`;
  if (f.outcome === "failed") return `failed: ${f.failure ?? "see its report.json"}`;
  const r = f.report;
  if (!r) return "processed";
  const done = r.kind === "import" ? `${r.imported} imported` : `${r.updated} opted out`;
  const skipped = r.kind === "import" && r.status === "skipped" ? " (already imported: skipped)" : "";
  return `${done}, ${r.rejected} rejected${topReasons(r.rejectedByReason)}${skipped}`;
}

/** The two most frequent reject reasons, e.g. " (email_invalid 2, phone_invalid 1)". */
export function topReasons(byReason: Record<string, number>): string {
  const top = Object.entries(byReason)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .slice(0, 2)
    .map(([reason, n]) => `${reason} ${n}`);
  return top.length ? ` (${top.join(", ")})` : "";
}

/** A path as the user typed it from the project folder, when it lies inside it. */
export function shortPath(p: string, from = process.cwd()): string {
  const rel = path.relative(from, p);
  return rel && !rel.startsWith("..") && !path.isAbsolute(rel) ? rel : p;
}
