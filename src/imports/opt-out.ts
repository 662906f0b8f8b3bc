import path from "node:path";
import pLimit from "p-limit";
import { z } from "zod";
import { type ApiClient, fillPath, NotFoundApiError, ValidationApiError } from "../api/index.ts";
import type { OptOutJobDefinition } from "../config/import-job.ts";
import { RecruitSyncError } from "../errors/index.ts";
import { buildOptOutReport, noOptOutCounts, type OptOutCounts } from "./build-report.ts";
import { ImportFileError } from "./import-error.ts";
import { type CsvSource, openCsv } from "./read-records.ts";
import { RejectsWriter } from "./rejects-writer.ts";
import type { OptOutReport } from "./report.ts";
import { RequestsWriter } from "./requests-writer.ts";
import { type RowProblem, type RowProblemCode, tallyRejects } from "./row-problem.ts";
import { describeHeaders, headersOf, isBlank, normalizeHeader } from "./rules/index.ts";

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
  /** Hears each person's fate for the run's sync log (src/synclog/person-log.ts). */
  personLog?: {
    listed(who: ListedPerson, row: number, outcome: "opted_out" | "opted_in" | { problem: RowProblem }): void;
    refused(row: number, problems: readonly RowProblem[]): void;
  };
}

/** A person an opt-out list names, as the sync log keys them. */
export interface ListedPerson {
  identifier: "email" | "personId";
  key: string;
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

/** A cell naming a person: an email (matched ignoring case) or a person id, or why it names nobody. */
type NamedPerson = { value: string; key: string } | { code: RowProblemCode; reason: string };

/** What an opt-out list's cell names: the value to send and the key repeats are dropped by. */
function namedPerson(cell: string): NamedPerson {
  const value = cell.trim();
  if (value === "") return { code: "missing_identifier", reason: "empty: no email or person id" };
  const isEmail = value.includes("@");
  if (isEmail ? !Email.safeParse(value).success : !PERSON_ID.test(value)) {
    return {
      code: "invalid_identifier",
      reason: isEmail ? "not a valid email address" : "not an email or a person id",
    };
  }
  return { value, key: isEmail ? value.toLowerCase() : value };
}

/**
 * What an opt-out run writes and sends: the rejects file (made at the header
 * row), the dry run's requests file, and the PUTs, a few in flight. The
 * first fault of the service (anything but a refusal of one person) stops
 * the run once the requests in flight are answered.
 */
class OptOutRun {
  readonly #options: RunOptOutOptions;
  readonly #counts: OptOutCounts;
  readonly #requests: RequestsWriter;
  readonly #limit: ReturnType<typeof pLimit>;
  readonly #inFlight = new Set<Promise<void>>();
  #rejects: RejectsWriter | undefined;
  #fault: unknown;

  constructor(options: RunOptOutOptions, counts: OptOutCounts) {
    this.#options = options;
    this.#counts = counts;
    this.#requests = new RequestsWriter(options.dryRun ? (options.requestsFile ?? null) : null);
    this.#limit = pLimit(options.definition.concurrency);
  }

  get failed(): boolean {
    return this.#fault !== undefined;
  }

  /** The rejects file, made once the header row is known. */
  useHeaders(headers: readonly string[], csv: CsvSource): void {
    this.#rejects = new RejectsWriter(this.#options.rejectsFile, headers, {
      delimiter: csv.delimiter,
      bom: csv.bom,
    });
  }

  /** A refused row: `who` when the service refused the person it names. */
  async reject(
    row: number,
    code: RowProblemCode,
    reason: string,
    cells: readonly string[],
    who?: ListedPerson,
  ): Promise<void> {
    const problem: RowProblem = { code, path: [], message: reason, row };
    if (who) this.#options.personLog?.listed(who, row, { problem });
    else this.#options.personLog?.refused(row, [problem]);
    this.#counts.rejected++;
    tallyRejects(this.#counts, reason, [code]);
    await this.#rejects?.write(row, reason, [code], cells);
  }

  /** Sets the person's isOptedOut, or, in a dry run, writes the request it would send. */
  async send(named: { value: string; key: string }, row: number, cells: readonly string[]): Promise<void> {
    const value = named.value;
    const optedOut = this.#options.definition.optedOut;
    this.#counts.requests++;
    if (this.#options.dryRun) {
      const path = fillPath(OPTED_OUT_PATH, { personIdOrEmail: value });
      await this.#requests.write("updateOptedOut", "PUT", path, JSON.stringify({ isOptedOut: optedOut }));
      this.#counts.updated++;
      return;
    }
    const who: ListedPerson = { identifier: value.includes("@") ? "email" : "personId", key: named.key };
    const p: Promise<void> = this.#limit(() => this.#put(value, who, optedOut, row, cells)).finally(() =>
      this.#inFlight.delete(p),
    );
    this.#inFlight.add(p);
    if (this.#inFlight.size >= this.#options.definition.concurrency * 4) await Promise.race(this.#inFlight);
  }

  async #put(
    value: string,
    who: ListedPerson,
    optedOut: boolean,
    row: number,
    cells: readonly string[],
  ): Promise<void> {
    if (this.#fault !== undefined) return;
    try {
      await (this.#options.client as ApiClient).updateOptedOut(value, optedOut, {
        signal: this.#options.signal,
      });
      this.#counts.updated++;
      this.#options.personLog?.listed(who, row, optedOut ? "opted_out" : "opted_in");
    } catch (err) {
      if (err instanceof NotFoundApiError)
        await this.reject(row, "person_not_found", "person not found", cells, who);
      else if (err instanceof ValidationApiError) {
        const reason = `service: ${err.errors.map((e) => e.message).join("; ")}`;
        await this.reject(row, "validation_failed", reason, cells, who);
      } else this.#fault ??= err;
    }
  }

  /** Waits for the requests in flight; the first fault, if any, is the run's. */
  async settle(): Promise<void> {
    await Promise.all(this.#inFlight);
    if (this.#fault !== undefined) throw this.#fault;
  }

  async closeFiles(): Promise<{ rejectsFile: string | null; requestsFile: string | null }> {
    const rejectsFile = (await this.#rejects?.close()) ?? null;
    this.#rejects = undefined;
    return { rejectsFile, requestsFile: await this.#requests.close() };
  }

  /** Whatever happened: no request left running, no file left open. */
  async close(): Promise<void> {
    await Promise.allSettled(this.#inFlight);
    await this.#rejects?.close().catch(() => {});
    await this.#requests.close().catch(() => {});
  }
}

/**
 * Reads the list: skips `source.skipRows` rows and blank ones, takes the
 * column naming each person at the header row, then sends each person once.
 * False when the file has no header row at all.
 */
async function readList(
  csv: CsvSource,
  def: OptOutJobDefinition,
  run: OptOutRun,
  counts: OptOutCounts,
  signal: AbortSignal | undefined,
): Promise<boolean> {
  let column = -1;
  let skipped = 0;
  const seen = new Set<string>();
  for await (const chunk of csv.records(signal)) {
    for (let i = 0; i < chunk.length && !run.failed; i++) {
      const row = chunk.firstRow + i;
      const cells = chunk.cells(i);
      if (column === -1 && skipped < def.source.skipRows) {
        skipped++;
        continue;
      }
      if (isBlank(cells)) {
        counts.blankRows++;
        continue;
      }
      if (column === -1) {
        const headers = headersOf(def, cells);
        column = identifierColumn(def, headers);
        run.useHeaders(headers, csv);
        if (def.source.header) continue;
      }
      counts.rowsRead++;
      const named = namedPerson(cells[column] ?? "");
      if ("code" in named) await run.reject(row, named.code, named.reason, cells);
      else if (seen.has(named.key)) counts.duplicates++;
      else {
        seen.add(named.key);
        await run.send(named, row, cells);
      }
    }
    if (run.failed) break;
  }
  return column !== -1;
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
  if (!dryRun && options.client === undefined) {
    throw new RecruitSyncError("usage", "runOptOut needs a client unless it is a dry run");
  }
  const csv = await openCsv(options.file, def.source);
  const counts = noOptOutCounts();
  const run = new OptOutRun({ ...options, dryRun }, counts);
  try {
    const hasHeader = await readList(csv, def, run, counts, options.signal);
    await run.settle();
    if (!hasHeader)
      throw new ImportFileError("file_empty", `${options.file} has no header row: nothing to do`);
    const files = await run.closeFiles();
    return buildOptOutReport({
      identity: {
        job: options.job ?? def.name ?? path.basename(options.file).replace(/\.[^.]*$/, ""),
        file: options.file,
        dryRun,
        encoding: csv.encoding,
        delimiter: csv.delimiter === "\t" ? "tab" : csv.delimiter,
      },
      optedOut: def.optedOut,
      counts,
      files,
      times: { started, finished: Date.now() },
    });
  } finally {
    await run.close();
  }
}
