import { createReadStream } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import path from "node:path";
import { createInterface } from "node:readline";
import { parse } from "csv-parse";
import type { Logger } from "pino";
import type { z } from "zod";
import { ImportPerson, SPEC_DEFAULTS } from "../../api/index.ts";
import type { RuntimeConfig } from "../../config/index.ts";
import { REJECT_COLUMNS } from "../../imports/index.ts";
import { runImportJob } from "../../runtime/run-import-job.ts";
import { opsRefusal } from "../ops-http-error.ts";
import type { PreviewAnswer, PreviewPerson, PreviewRejectedRow } from "./api-contract.ts";
import type { Upload } from "./upload-store.ts";

/** People and rejected rows a preview shows: enough to judge a mapping by, few enough to read. */
export const PREVIEW_ROWS = 20;

async function firstRequests(file: string | null, limit: number): Promise<z.input<typeof PreviewPerson>[]> {
  if (!file) return [];
  const out: z.input<typeof PreviewPerson>[] = [];
  const lines = createInterface({
    input: createReadStream(file, "utf8"),
    crlfDelay: Number.POSITIVE_INFINITY,
  });
  try {
    for await (const line of lines) {
      if (!line.trim()) continue;
      const request = JSON.parse(line) as { path: string; body: Record<string, unknown> };
      const people = Array.isArray(request.body.people) ? request.body.people : [request.body];
      const chosen = request.body[SPEC_DEFAULTS.importPopulationField];
      const population = typeof chosen === "string" ? chosen : null;
      for (const person of people) {
        // Read back from a file of this run's own: parsed as the contract's person, like anything read in.
        out.push({ path: request.path, population, person: ImportPerson.parse(person) });
        if (out.length >= limit) return out;
      }
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  } finally {
    lines.close();
  }
  return out;
}

/** The first rows of a rejects file, written in its source's delimiter, with a BOM when the source had one. */
async function firstRejects(
  file: string | null,
  limit: number,
  sourceDelimiter: string,
): Promise<{ headers: string[]; rows: PreviewRejectedRow[] }> {
  if (!file) return { headers: [], rows: [] };
  const delimiter = sourceDelimiter === "tab" ? "\t" : sourceDelimiter;
  const records = createReadStream(file).pipe(
    parse({ relax_column_count: true, to: limit + 1, delimiter, bom: true }),
  );
  let headers: string[] = [];
  const rows: PreviewRejectedRow[] = [];
  for await (const record of records as AsyncIterable<string[]>) {
    if (!headers.length) {
      headers = record.slice(REJECT_COLUMNS.length);
      continue;
    }
    rows.push({
      row: Number(record[0]),
      reason: record[1] ?? "",
      cells: record.slice(REJECT_COLUMNS.length),
    });
  }
  return { headers, rows };
}

/**
 * A dry run of the whole upload with the definition given, through the
 * import pipeline every run takes: the first people as their requests would
 * carry them and the first rejected rows with their reason, and the counts of
 * the report. Its files are written in a private folder of the upload and
 * removed once read. Nothing is sent, no lock or ledger is touched.
 */
export async function previewUpload(
  config: RuntimeConfig,
  upload: Upload,
  definition: Record<string, unknown>,
  options: { logger: Logger; signal?: AbortSignal },
): Promise<z.input<typeof PreviewAnswer>> {
  const work = path.join(upload.dir, `preview-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`);
  await mkdir(work, { mode: 0o700 });
  try {
    let outcome: Awaited<ReturnType<typeof runImportJob>>;
    try {
      outcome = await runImportJob(
        {
          file: upload.file,
          definition,
          dryRun: true,
          runId: "preview",
          rejectsFile: path.join(work, "rejects.csv"),
          requestsFile: path.join(work, "requests.jsonl"),
        },
        {
          config,
          holder: "ops console preview",
          logger: options.logger,
          ...(options.signal ? { signal: options.signal } : {}),
        },
      );
    } catch (err) {
      throw opsRefusal(err, "ops_invalid_request", { hide: upload.file });
    }
    const { report } = outcome;
    const [sent, rejects] = await Promise.all([
      firstRequests(report.requestsFile, PREVIEW_ROWS),
      firstRejects(report.rejectsFile, PREVIEW_ROWS, "delimiter" in report ? report.delimiter : ","),
    ]);
    const { rejectsFile: _r, requestsFile: _q, ...rest } = report;
    const shown = "warningsFile" in rest ? (({ warningsFile: _w, ...r }) => r)(rest) : rest;
    return { report: shown, sent, rejectedHeaders: rejects.headers, rejected: rejects.rows };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
