import type { ImportPerson } from "../api/index.ts";
import type { BatchEntry } from "../imports/batch.ts";
import { reasonOf } from "../imports/row-problem.ts";
import { identifierKey } from "../imports/rules/index.ts";
import type { BatchResult } from "../imports/send-phase.ts";
import { personDigest } from "../imports/unverified-people.ts";
import type { SyncLogOutcome, SyncLogRow, SyncLogVerification } from "./table.ts";

interface Fate {
  rows: number[];
  outcome: SyncLogOutcome;
  reason: string | null;
  importId: string | null;
  verification: SyncLogVerification | null;
}

/**
 * Gathers what became of each person of an import run as the answers come,
 * keyed by their identifier's digest. A person sent again (a later version
 * with their rows so far) replaces the earlier entry: the latest version
 * decides, as in the report's counts (row-outcomes.ts). A resumed run hears
 * of the batches an earlier run finished too (their entries and the ledger's
 * import ids), so it logs every person of the file.
 */
export class PersonLog {
  readonly #fates = new Map<string, Fate>();
  readonly #identifier: string;

  constructor(identifier: string) {
    this.#identifier = identifier;
  }

  get size(): number {
    return this.#fates.size;
  }

  /** One batch's answer (or an earlier run's, for a resumed batch). */
  batch(result: BatchResult): void {
    const refused = new Map(result.refusedEntries.map((r) => [r.entry, reasonOf(r.problems)]));
    // Bisected batches took several requests: which carried whom is not kept, so all are named.
    const importId = result.importIds.length > 0 ? result.importIds.join(",") : null;
    const doubted = (result.countMismatches?.length ?? 0) > 0 || result.countMismatch;
    for (const entry of result.entries) {
      const reason = refused.get(entry);
      this.#set(entry, {
        rows: entry.rows,
        outcome: reason === undefined ? "imported" : "rejected",
        reason: reason ?? null,
        importId,
        verification: reason !== undefined ? null : doubted ? "unverified" : "unchecked",
      });
    }
  }

  /** A person the change-only state held back: the same as the last run sent. */
  held(entry: BatchEntry): void {
    this.#set(entry, {
      rows: entry.rows,
      outcome: "unchanged",
      reason: null,
      importId: null,
      verification: null,
    });
  }

  #set(entry: BatchEntry, fate: Fate): void {
    const value = this.#valueOf(entry.person);
    if (value === undefined) return;
    this.#fates.set(personDigest(this.#identifier, value), fate);
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

  /**
   * The people as NDJSON lines of the per-person columns only (the run's
   * own columns are the same on every row): what a bulk load reads.
   */
  *compactLines(): Generator<string> {
    const text = (v: string | null) => (v === null ? "null" : JSON.stringify(v));
    for (const [digest, f] of this.#fates) {
      yield `{"d":"${digest}","r":[${f.rows.join(",")}],"o":"${f.outcome}","x":${text(f.reason)},"i":${text(f.importId)},"v":${text(f.verification)}}`;
    }
  }

  /** The rows of sync_log, in no particular order. */
  *rows(run: { runId: string; job: string; studyId: string; at: Date }): Generator<SyncLogRow> {
    for (const [digest, f] of this.#fates) {
      yield {
        run_id: run.runId,
        person_digest: digest,
        job: run.job,
        study_id: run.studyId,
        identifier: this.#identifier,
        source_rows: f.rows,
        outcome: f.outcome,
        reason: f.reason,
        import_id: f.importId,
        verification: f.verification,
        logged_at: run.at,
        checked_at: null,
      };
    }
  }
}

/** Whether the quote at `at` is escaped: an odd run of backslashes before it. */
function escaped(json: string, at: number): boolean {
  let n = 0;
  while (json[at - 1 - n] === "\\") n++;
  return n % 2 === 1;
}
