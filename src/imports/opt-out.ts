import path from "node:path";
import pLimit from "p-limit";
import { z } from "zod";
import { type ApiClient, fillPath, NotFoundApiError, ValidationApiError } from "../api/index.ts";
import type { OptOutJobDefinition } from "../config/import-job.ts";
import { RecruitSyncError } from "../errors/index.ts";
import { buildOptOutReport, noOptOutCounts } from "./build-report.ts";
import { headersOf, isBlank } from "./chunk-mapper.ts";
import { normalizeHeader } from "./column-plan.ts";
import { describeHeaders } from "./header-echo.ts";
import { ImportFileError } from "./import-error.ts";
import { type CsvRecord, openCsv, type RecordChunk } from "./read-records.ts";
import { RejectsWriter } from "./rejects-writer.ts";
import type { OptOutReport } from "./report.ts";
import { RequestsWriter } from "./requests-writer.ts";
import { type RowProblemCode, tallyRejects } from "./row-problem.ts";

export interface RunOptOutOptions {
  file: string;
  definition: OptOutJobDefinition;
  job?: string;
  /** Required unless dryRun. Every request passes through its rate-limit hook. */
  client?: ApiClient;
  dryRun?: boolean;
  requestsFile?: string;
  rejectsFile: string;
  signal?: AbortSignal;
}

const COLUMN_SYNONYMS = ["email", "emailaddress", "personid", "id", "personidoremail"];
const Email = z.email();
const PERSON_ID = /^[^\s/?#@]+$/;
const OPTED_OUT_PATH = "/people/{personIdOrEmail}/opted-out";

/**
 * The column naming each person: the definition's `column`, else the first
 * header that reads as an email or a person id, else the first column.
 */
function identifierColumn(def: OptOutJobDefinition, headers: readonly string[]): number {
  const norm = headers.map(normalizeHeader);
  if (def.column !== undefined) {
    const column = norm.indexOf(normalizeHeader(def.column));
    if (column === -1) {
      throw new ImportFileError(
        "file_missing_column",
        `column "${def.column}" is not in the file (${describeHeaders(headers)})`,
      );
    }
    return column;
  }
  if (!def.source.header) return 0;
  return COLUMN_SYNONYMS.map((s) => norm.indexOf(s)).find((i) => i >= 0) ?? 0;
}

/**
 * Sets isOptedOut for every person a CSV lists by email or person id: one
 * PUT /people/{personIdOrEmail}/opted-out each (spec 4.7), a few in flight.
 * Unknown people (404) and refused values are rejects, like bad rows. The
 * requests are idempotent, so a rerun of the same list is harmless and no
 * ledger is kept. Memory grows with the number of distinct people (one
 * string each, for dropping repeats), which is fine for opt-out lists.
 */
export async function runOptOut(options: RunOptOutOptions): Promise<OptOutReport> {
  const started = Date.now();
  const def = options.definition;
  const dryRun = options.dryRun === true;
  const client = options.client;
  if (!dryRun && client === undefined) {
    throw new RecruitSyncError("usage", "runOptOut needs a client unless it is a dry run");
  }
  const csv = await openCsv(options.file, def.source);
  const identity = {
    job: options.job ?? def.name ?? path.basename(options.file).replace(/\.[^.]*$/, ""),
    file: options.file,
    dryRun,
    encoding: csv.encoding,
    delimiter: csv.delimiter === "\t" ? "tab" : csv.delimiter,
  };
  const counts = noOptOutCounts();
  const requests = new RequestsWriter(dryRun ? (options.requestsFile ?? null) : null);
  let rejects: RejectsWriter | undefined;
  const limit = pLimit(def.concurrency);
  const inFlight = new Set<Promise<void>>();
  let fault: unknown;
  const reject = async (row: number, code: RowProblemCode, reason: string, cells: readonly string[]) => {
    counts.rejected++;
    tallyRejects(counts, reason, [code]);
    await rejects?.write(row, reason, [code], cells);
  };

  try {
    let column = -1;
    let skipped = 0;
    const seen = new Set<string>();
    const rows = async function* (chunks: AsyncGenerator<RecordChunk>): AsyncGenerator<CsvRecord> {
      for await (const chunk of chunks) {
        for (let i = 0; i < chunk.length; i++) yield { row: chunk.firstRow + i, cells: chunk.cells(i) };
      }
    };
    for await (const rec of rows(csv.records(options.signal))) {
      if (fault !== undefined) break;
      const blank = isBlank(rec.cells);
      if (column === -1) {
        if (skipped < def.source.skipRows) {
          skipped++;
          continue;
        }
        if (blank) {
          counts.blankRows++;
          continue;
        }
        const headers = headersOf(def, rec.cells);
        column = identifierColumn(def, headers);
        rejects = new RejectsWriter(options.rejectsFile, headers, { delimiter: csv.delimiter, bom: csv.bom });
        if (def.source.header) continue;
      }
      if (blank) {
        counts.blankRows++;
        continue;
      }
      counts.rowsRead++;
      const value = (rec.cells[column] ?? "").trim();
      if (value === "") {
        await reject(rec.row, "missing_identifier", "empty: no email or person id", rec.cells);
        continue;
      }
      const isEmail = value.includes("@");
      if (isEmail ? !Email.safeParse(value).success : !PERSON_ID.test(value)) {
        await reject(
          rec.row,
          "invalid_identifier",
          isEmail ? "not a valid email address" : "not an email or a person id",
          rec.cells,
        );
        continue;
      }
      const key = isEmail ? value.toLowerCase() : value;
      if (seen.has(key)) {
        counts.duplicates++;
        continue;
      }
      seen.add(key);
      counts.requests++;
      if (dryRun) {
        await requests.write(
          "updateOptedOut",
          "PUT",
          fillPath(OPTED_OUT_PATH, { personIdOrEmail: value }),
          JSON.stringify({ isOptedOut: def.optedOut }),
        );
        counts.updated++;
        continue;
      }
      const cells = rec.cells;
      const row = rec.row;
      const p: Promise<void> = limit(async () => {
        if (fault !== undefined) return;
        try {
          await (client as ApiClient).updateOptedOut(value, def.optedOut, { signal: options.signal });
          counts.updated++;
        } catch (err) {
          if (err instanceof NotFoundApiError)
            await reject(row, "person_not_found", "person not found", cells);
          else if (err instanceof ValidationApiError) {
            await reject(
              row,
              "validation_failed",
              `service: ${err.errors.map((e) => e.message).join("; ")}`,
              cells,
            );
          } else fault ??= err;
        }
      }).finally(() => inFlight.delete(p));
      inFlight.add(p);
      if (inFlight.size >= def.concurrency * 4) await Promise.race(inFlight);
    }
    await Promise.all(inFlight);
    if (fault !== undefined) throw fault;
    if (column === -1)
      throw new ImportFileError("file_empty", `${options.file} has no header row: nothing to do`);
    const rejectsFile = (await rejects?.close()) ?? null;
    rejects = undefined;
    const requestsFile = await requests.close();
    return buildOptOutReport({
      identity,
      optedOut: def.optedOut,
      counts,
      files: { rejectsFile, requestsFile },
      times: { started, finished: Date.now() },
    });
  } finally {
    await Promise.allSettled(inFlight);
    await rejects?.close().catch(() => {});
    await requests.close().catch(() => {});
  }
}
