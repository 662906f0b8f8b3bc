import { readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { parse } from "csv-parse/sync";
import { mentionTest, valueIsWho, type Who } from "./who.ts";

/** What became of one file that held the person. */
export interface FileRemoval {
  /** Relative to the folder scrubbed. */
  file: string;
  /**
   * rewritten: the rows naming the person left out, the rest as it was;
   * deleted: a file that could not be rewritten row by row; left: a database
   * file no warehouse URL names (its bytes name the person; open it and delete them there).
   */
  action: "rewritten" | "deleted" | "left";
  /** Rows (CSV records, JSON lines) left out; 0 for a deleted file. */
  rows: number;
}

const ROW_FILES = /\.(csv|tsv|tab|txt)$/i;
const LINE_FILES = /\.(ndjson|jsonl)$/i;
/** Databases: deleting one for a person's row would lose everyone else's. */
const DATABASE_FILES = /\.(duckdb|db|sqlite|sqlite3|parquet|wal)$/i;
/** Keys of a JSON line that name the person in the service, gathered before the lines go. */
const ID_KEYS = { person: ["person_id", "personId"], participant: ["participant_id", "participantId"] };

async function* walk(dir: string, skip: (file: string) => boolean): AsyncGenerator<string> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const e of entries) {
    const full = path.join(dir, e.name);
    if (skip(full)) continue;
    if (e.isDirectory()) yield* walk(full, skip);
    else if (e.isFile()) yield full;
  }
}

/** The delimiter of a CSV by its first line: the candidate it holds most of. */
function delimiterOf(text: string): string {
  const first = text.slice(0, text.search(/\r?\n|$/));
  let best = ",";
  let most = 0;
  for (const d of [",", ";", "\t", "|"]) {
    const n = first.split(d).length - 1;
    if (n > most) {
      best = d;
      most = n;
    }
  }
  return best;
}

/** The file's records by byte span, the first (the header) always kept. */
function withoutRecords(
  bytes: Buffer,
  mentions: (t: string) => boolean,
  who: Who,
): { out: Buffer; rows: number } | undefined {
  const text = bytes.toString("utf8");
  let records: { record: string[]; info: { bytes: number } }[];
  try {
    records = parse(bytes, {
      info: true,
      bom: false,
      delimiter: delimiterOf(text),
      relax_column_count: true,
      relax_quotes: true,
      skip_empty_lines: false,
    }) as unknown as { record: string[]; info: { bytes: number } }[];
  } catch {
    return undefined;
  }
  const kept: Buffer[] = [];
  let start = 0;
  let rows = 0;
  records.forEach((r, i) => {
    const span = bytes.subarray(start, r.info.bytes);
    start = r.info.bytes;
    const hit = i > 0 && (r.record.some((cell) => valueIsWho(who, cell)) || mentions(span.toString("utf8")));
    if (hit) rows++;
    else kept.push(span);
  });
  if (start < bytes.length) kept.push(bytes.subarray(start));
  return { out: Buffer.concat(kept), rows };
}

function withoutLines(bytes: Buffer, mentions: (t: string) => boolean): { out: Buffer; rows: number } {
  const lines = bytes.toString("utf8").split(/(?<=\n)/);
  const kept = lines.filter((l) => !mentions(l));
  return { out: Buffer.from(kept.join(""), "utf8"), rows: lines.length - kept.length };
}

/** Ids of the person named by JSON lines that mention their email or phone (the file warehouse's participants). */
async function gatherIds(root: string, skip: (file: string) => boolean, who: Who): Promise<void> {
  const mentions = mentionTest({ ...who, personIds: new Set(), participantIds: new Set() });
  for await (const file of walk(root, skip)) {
    if (!LINE_FILES.test(file)) continue;
    for (const line of (await readFile(file, "utf8")).split("\n")) {
      if (!line.trim() || !mentions(line)) continue;
      try {
        const row = JSON.parse(line) as Record<string, unknown>;
        for (const k of ID_KEYS.person) if (typeof row[k] === "string" && row[k]) who.personIds.add(row[k]);
        for (const k of ID_KEYS.participant)
          if (typeof row[k] === "string" && row[k]) who.participantIds.add(row[k]);
      } catch {
        // Not a JSON line: nothing to gather from it; it still goes below.
      }
    }
  }
}

/** Replaces a file's bytes through a temporary file beside it, keeping its mode. */
async function replaceFile(file: string, bytes: Buffer): Promise<void> {
  const mode = (await stat(file)).mode & 0o777;
  const tmp = `${file}.forget-${process.pid}`;
  await writeFile(tmp, bytes, { mode });
  await rename(tmp, file);
}

/**
 * Removes the person from every file under `root`: CSV files (rejects,
 * warnings, uploads, the file warehouse's CSV parts) are rewritten without
 * the records that name them, byte for byte otherwise (delimiter, quoting,
 * BOM, line endings kept); JSON-lines files (the file warehouse's parts, a
 * dry run's requests) without the lines that name them; any other file that
 * names them (a spill file of an interrupted run) is deleted, since it
 * cannot be rewritten row by row. `skip` leaves out what another step owns
 * (the DuckDB warehouse) and the receipts.
 */
export async function scrubFolder(
  root: string,
  who: Who,
  skip: (file: string) => boolean,
): Promise<FileRemoval[]> {
  if (!(await stat(root).catch(() => undefined))) return [];
  await gatherIds(root, skip, who);
  const mentions = mentionTest(who);
  const removals: FileRemoval[] = [];
  for await (const file of walk(root, skip)) {
    const bytes = await readFile(file);
    const rel = path.relative(root, file);
    let result: { out: Buffer; rows: number } | undefined;
    if (LINE_FILES.test(file)) result = withoutLines(bytes, mentions);
    else if (ROW_FILES.test(file)) result = withoutRecords(bytes, mentions, who);
    if (result) {
      if (result.rows > 0) {
        await replaceFile(file, result.out);
        removals.push({ file: rel, action: "rewritten", rows: result.rows });
      }
      if (!mentions(result.out.toString("utf8"))) continue;
    }
    if (!result && DATABASE_FILES.test(file)) {
      if (mentions(bytes.toString("latin1"))) removals.push({ file: rel, action: "left", rows: 0 });
      continue;
    }
    // Not rewritable row by row (or a row the parser could not place): the file goes.
    if (result || mentions(bytes.toString("utf8")) || mentions(bytes.toString("latin1"))) {
      await rm(file, { force: true });
      const earlier = removals.find((r) => r.file === rel);
      if (earlier) earlier.action = "deleted";
      else removals.push({ file: rel, action: "deleted", rows: 0 });
    }
  }
  return removals;
}
