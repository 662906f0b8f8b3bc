import type { BatchEntry } from "./batch.ts";
import { codesOf, type RowProblem, reasonOf, tallyRejects } from "./row-problem.ts";

const NONE = 0;
const IMPORTED = 1;
const DUPLICATE = 2;
const REJECTED = 3;
const UNCHANGED = 4;
type Status = typeof NONE | typeof IMPORTED | typeof DUPLICATE | typeof REJECTED | typeof UNCHANGED;

/**
 * What became of each valid row, one byte a row, and the counts that follow.
 * A person met again after being sent is sent again with all their rows so
 * far, so a row's outcome can change: the latest version of a person decides
 * for all of its rows (its last row imported or unchanged, the others merged
 * duplicates, or all of them refused). Counting transitions keeps every row
 * in exactly one count whatever order the versions were answered in.
 */
export class RowOutcomes {
  #status = new Uint8Array(1024);
  imported = 0;
  duplicates = 0;
  /** Rows the service refused (rows refused while reading are counted by the read phase). */
  rejected = 0;
  unchanged = 0;
  /** Rows the service refused, with its problems: their cells go to the rejects file at the end. */
  readonly refused = new Map<number, readonly RowProblem[]>();
  /** The service's reasons and codes, by how many rows each refused now (a row with two codes counts under both). */
  readonly tally: { rejectedByReason: Record<string, number>; rejectedByCode: Record<string, number> } = {
    rejectedByReason: {},
    rejectedByCode: {},
  };

  /** The service accepted this version of a person. */
  accept(entry: BatchEntry): void {
    this.#settle(entry, IMPORTED);
  }

  /** This version is what the last run sent (change-only): not sent. */
  hold(entry: BatchEntry): void {
    this.#settle(entry, UNCHANGED);
  }

  /** The service refused this version of a person: all of its rows are rejected. */
  refuse(entry: BatchEntry, problems: readonly RowProblem[]): void {
    for (const row of entry.rows) this.#set(row, REJECTED, problems);
  }

  #settle(entry: BatchEntry, last: Status): void {
    const n = entry.rows.length;
    for (let i = 0; i < n - 1; i++) this.#set(entry.rows[i] as number, DUPLICATE);
    this.#set(entry.rows[n - 1] as number, last);
  }

  #set(row: number, status: Status, problems?: readonly RowProblem[]): void {
    while (row >= this.#status.length) {
      const grown = new Uint8Array(this.#status.length * 2);
      grown.set(this.#status);
      this.#status = grown;
    }
    const was = this.#status[row] as Status;
    this.#count(was, -1, row);
    this.#status[row] = status;
    if (status === REJECTED && problems !== undefined) this.refused.set(row, problems);
    this.#count(status, 1, row);
  }

  #count(status: Status, by: 1 | -1, row: number): void {
    if (status === IMPORTED) this.imported += by;
    else if (status === DUPLICATE) this.duplicates += by;
    else if (status === UNCHANGED) this.unchanged += by;
    else if (status === REJECTED) {
      this.rejected += by;
      const problems = this.refused.get(row);
      if (problems !== undefined) {
        this.#tally(problems, by);
        if (by === -1) this.refused.delete(row);
      }
    }
  }

  #tally(problems: readonly RowProblem[], by: 1 | -1): void {
    const { rejectedByReason, rejectedByCode } = this.tally;
    const reason = reasonOf(problems);
    const codes = codesOf(problems);
    tallyRejects(this.tally, reason, codes, by);
    // A row that was refused and is now imported leaves no zero behind.
    if (rejectedByReason[reason] === 0) delete rejectedByReason[reason];
    for (const code of codes) if (rejectedByCode[code] === 0) delete rejectedByCode[code];
  }
}
