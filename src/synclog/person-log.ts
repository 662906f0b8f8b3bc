import { closeSync, openSync, readdirSync, rmSync, writeSync } from "node:fs";
import path from "node:path";
import type { ImportPerson } from "../api/index.ts";
import type { BatchEntry } from "../imports/batch.ts";
import { codesOf, type RowProblem, reasonOf } from "../imports/row-problem.ts";
import { identifierKey } from "../imports/rules/index.ts";
import type { BatchResult } from "../imports/send-phase.ts";
import { personDigest } from "../imports/unverified-people.ts";
import type { SyncLogOutcome } from "./table.ts";

/** Bytes of lines gathered before they are written: a few hundred writes for a 300k-row import. */
const FLUSH_BYTES = 1 << 16;

/**
 * The columns of a line of the log file, in order (its first line names
 * them): `s` the line's number (later lines of a person win), `d` the
 * identifier's value as the import matches it, `n` the identifier when it is not the run's, or
 * `#` when `d` is the person's name in sync_log already (a digest made here,
 * or `row:<n>`), `r` the source rows separated by spaces, `o` outcome, `x`
 * reason, `c` codes (`;`-joined), `i` import ids, `v` verification. An empty
 * field is NULL. The load digests the values (personDigest, in SQL):
 * SHA-256 in the database costs the import's main thread nothing.
 */
export const LOG_FILE_COLUMNS = ["s", "d", "n", "r", "o", "x", "c", "i", "v"] as const;

/** Lines of a part unless told (syncLog.partLines, whose default this is). */
const PART_LINES = 122_880;

/** One closed file of a run's log: its lines are loaded together. */
export interface LogPart {
  file: string;
  lines: number;
}

/**
 * What became of each person of an import or opt-out run, appended to CSV
 * files (0600: they hold emails or phones, as the rejects file does) as the
 * answers come. Every PART_LINES lines the file is closed as a part and
 * handed to `onPart`, which loads it into the warehouse while the run goes
 * on (part-loader.ts); the last part is loaded with the run's sync_runs row
 * when the run ends (write-run-log.ts). A person sent again (a later version
 * with their rows so far) appends a later line, maybe in a later part: the
 * latest line decides, as in the report's counts (row-outcomes.ts). Line
 * numbers run on across parts, so the latest is the highest. A resumed run
 * hears of the batches an earlier run finished too (their entries and the
 * ledger's import ids), so it logs every person of the file.
 *
 * Keeping every person's fate in a Map until the end, as this did before,
 * made the main thread's heap grow by one object and its row array per
 * person during the run: a line in a buffer is garbage at once.
 */
export class PersonLog {
  readonly #base: string;
  readonly #identifier: string;
  readonly #partLines: number;
  readonly #onPart: ((part: LogPart) => void) | undefined;
  #fd: number | undefined;
  #file = "";
  #buffer = "";
  #lines = 0;
  #partStart = 0;
  readonly #parts: LogPart[] = [];
  /** A write that failed (a full disk): the run goes on, and close() reports it. */
  #failure: unknown;
  #mayRepeat: boolean;

  /**
   * Starts the files afresh: a resumed run under the same id writes every
   * person again, and the parts an earlier attempt left (killed before it
   * could load or remove them) are removed first. `file` names the parts: `x.csv` is written as `x.1.csv`,
   * `x.2.csv`… `populations`: the job sorts people into populations, so one
   * identifier can be two people of the run (one a population), each with a line.
   */
  constructor(
    identifier: string,
    file: string,
    options: { populations?: boolean; partLines?: number; onPart?: (part: LogPart) => void } = {},
  ) {
    this.#identifier = identifier;
    this.#mayRepeat = options.populations === true;
    this.#base = file.replace(/\.csv$/, "");
    this.#partLines = options.partLines ?? PART_LINES;
    this.#onPart = options.onPart;
    removeEarlierParts(this.#base);
    this.#openPart();
  }

  /** The parts closed so far, in order: every part once close() has run. */
  get parts(): readonly LogPart[] {
    return this.#parts;
  }

  /** Every file of the log, the one being written included: what is left of a run given up is removed. */
  get files(): readonly LogPart[] {
    const open = this.#parts.some((p) => p.file === this.#file) ? [] : [{ file: this.#file, lines: 0 }];
    return [...this.#parts, ...open];
  }

  /**
   * Whether a person may have more than one line: a version of a person
   * with more than one row (a later version, or rows merged before the first
   * was sent), or a job with populations. Without either, every person has one
   * line, and the load need not look for the latest. It only ever turns true,
   * and before the line that needs it is in a closed part.
   */
  get mayRepeat(): boolean {
    return this.#mayRepeat;
  }

  /** Lines written so far (a person sent twice counts twice). */
  get lines(): number {
    return this.#lines;
  }

  /** One batch's answer (or an earlier run's, for a resumed batch). */
  batch(result: BatchResult): void {
    const refused =
      result.refusedEntries.length > 0
        ? new Map(result.refusedEntries.map((r) => [r.entry, r.problems]))
        : undefined;
    // Bisected batches took several requests: which carried whom is not kept, so all are named.
    const importId = result.importIds.length > 0 ? csvField(result.importIds.join(",")) : "";
    const doubted = (result.countMismatches?.length ?? 0) > 0 || result.countMismatch;
    const accepted = `imported,,,${importId},${doubted ? "unverified" : "unchecked"}`;
    for (const entry of result.entries) {
      const name = this.#nameOf(entry.person);
      if (name === undefined) continue;
      const problems = refused?.get(entry);
      const rest = problems === undefined ? accepted : `rejected,${problemFields(problems)},${importId},`;
      this.#line(`${name},${this.#rowsField(entry.rows)},${rest}`);
    }
  }

  /** A person the change-only state held back: the same as the last run sent. */
  held(entry: BatchEntry): void {
    const name = this.#nameOf(entry.person);
    if (name !== undefined) this.#line(`${name},${this.#rowsField(entry.rows)},unchanged,,,,`);
  }

  /**
   * A row refused while reading: it never became a person, so it is named
   * by its row (`row:<n>`), with the codes and reason of its refusal.
   */
  refused(row: number, problems: readonly RowProblem[]): void {
    this.#line(`row:${row},#,${row},rejected,${problemFields(problems)},,`);
  }

  /**
   * A person of an opt-out list, named by email (in lower case) or person
   * id: `outcome` what the service was asked, or `rejected` with the
   * problem when it refused.
   */
  listed(
    who: { identifier: "email" | "personId"; key: string },
    row: number,
    outcome: Extract<SyncLogOutcome, "opted_out" | "opted_in"> | { problem: RowProblem },
  ): void {
    const identifier = who.identifier === this.#identifier ? "" : who.identifier;
    const rest =
      typeof outcome === "string" ? `${outcome},,,,` : `rejected,${problemFields([outcome.problem])},,`;
    this.#line(`${valueFields(who.identifier, who.key, identifier)},${row},${rest}`);
  }

  /**
   * Every batch is answered: the part being written is handed on now, to
   * load while the run finishes; a line after this starts another part.
   */
  sent(): void {
    if (this.#fd === undefined || this.#lines === this.#partStart) return;
    this.#closePart(true);
    this.#openPart();
  }

  /** Closes the last part; throws when a write failed, the log being incomplete. */
  close(): void {
    if (this.#fd !== undefined) this.#closePart(false);
    if (this.#failure !== undefined) throw this.#failure;
  }

  #line(fields: string): void {
    if (this.#fd === undefined) return;
    this.#lines++;
    this.#buffer += `${this.#lines},${fields}\n`;
    if (this.#buffer.length >= FLUSH_BYTES) this.#flush();
    if (this.#fd !== undefined && this.#lines - this.#partStart >= this.#partLines) {
      this.#closePart(true);
      this.#openPart();
    }
  }

  #openPart(): void {
    this.#file = `${this.#base}.${this.#parts.length + 1}.csv`;
    this.#partStart = this.#lines;
    try {
      this.#fd = openSync(this.#file, "w", 0o600);
    } catch (err) {
      // The first part's failure is the constructor's; a later one ends the log as a failed write does.
      if (this.#parts.length === 0) throw err;
      this.#failure = err;
      return;
    }
    // A header line, as every CSV of the data folder has: `forget` keeps a file's first line as its header.
    this.#buffer = `${LOG_FILE_COLUMNS.join(",")}\n`;
  }

  /** Writes what is buffered and closes the part; hands it on when the run goes on (`handOn`). */
  #closePart(handOn: boolean): void {
    this.#flush();
    if (this.#fd === undefined) return;
    closeSync(this.#fd);
    this.#fd = undefined;
    const part = { file: this.#file, lines: this.#lines - this.#partStart };
    this.#parts.push(part);
    if (handOn && this.#failure === undefined) this.#onPart?.(part);
  }

  #flush(): void {
    if (this.#fd === undefined || this.#buffer === "") return;
    try {
      writeSync(this.#fd, this.#buffer);
    } catch (err) {
      // The import goes on: its log is what is lost, and the run's end says so (ImportRunLog).
      this.#failure = err;
      closeSync(this.#fd);
      this.#fd = undefined;
    }
    this.#buffer = "";
  }

  /** Source rows separated by spaces: most people have one; a person with more may have an earlier line. */
  #rowsField(rows: readonly number[]): string {
    if (rows.length === 1) return String(rows[0]);
    this.#mayRepeat = true;
    return rows.join(" ");
  }

  /** The `d` and `n` fields of a person's line. */
  #nameOf(json: string): string | undefined {
    const value = this.#valueOf(json);
    return value === undefined ? undefined : valueFields(this.#identifier, value, "");
  }

  /**
   * The identifier's value as the import matches it. An email or phone is
   * read straight from the person's JSON: a key `"email":"` cannot occur
   * inside a JSON string (its quotes would be escaped), and parsing a whole
   * person per row cost a 300k-row import ~0.8 s.
   */
  #valueOf(json: string): string | undefined {
    const key =
      this.#identifier === "email" ? '"email":"' : this.#identifier === "phone" ? '"phone":"' : undefined;
    if (key === undefined) return identifierKey(JSON.parse(json) as ImportPerson, this.#identifier);
    const at = json.indexOf(key);
    if (at === -1) return undefined;
    const start = at + key.length - 1;
    let end = json.indexOf('"', start + 1);
    while (end !== -1 && escaped(json, end)) end = json.indexOf('"', end + 1);
    if (end === -1) return undefined;
    const raw = json.slice(start, end + 1);
    const value = raw.includes("\\") ? (JSON.parse(raw) as string) : raw.slice(1, -1);
    return this.#identifier === "email" ? value.toLowerCase() : value;
  }
}

/**
 * Removes `<base>.<n>.csv` of an earlier attempt of the run: its lines are
 * written again by this one, and they hold emails or phones. Only that run's
 * files: the run id in `base` is this run's own (a queue job's, or the one an
 * inline run took over under the run lock).
 */
function removeEarlierParts(base: string): void {
  const dir = path.dirname(base);
  const prefix = `${path.basename(base)}.`;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (name.startsWith(prefix) && /^\d+\.csv$/.test(name.slice(prefix.length))) {
      rmSync(path.join(dir, name), { force: true });
    }
  }
}

/**
 * The `d` and `n` fields of a value: the value, for the load to digest, or
 * its digest made here when a line break in it would break the line (a
 * custom property's value, say).
 */
function valueFields(identifier: string, value: string, n: string): string {
  if (/[\r\n]/.test(value)) return `${personDigest(identifier, value)},#`;
  return `${csvField(value)},${n}`;
}

/** The reason and codes fields of a refusal. */
function problemFields(problems: readonly RowProblem[]): string {
  return `${csvField(reasonOf(problems))},${csvField(codesOf(problems).join(";"))}`;
}

/**
 * A CSV field: quoted when it holds a separator or a quote; a line break
 * becomes a space, so a line of the file is a line of the log. Empty stays
 * empty (NULL).
 */
function csvField(text: string): string {
  if (!/[",\n\r]/.test(text)) return text;
  return `"${text.replace(/[\r\n]+/g, " ").replaceAll('"', '""')}"`;
}

/** Whether the quote at `at` is escaped: an odd run of backslashes before it. */
function escaped(json: string, at: number): boolean {
  let n = 0;
  while (json[at - 1 - n] === "\\") n++;
  return n % 2 === 1;
}
