import type { BatchEntry } from "./batch.ts";
import { type CountMismatch, countMismatchWarning } from "./count-mismatch.ts";
import { RowOutcomes } from "./row-outcomes.ts";
import type { RejectTally, RowProblem } from "./row-problem.ts";
import type { BatchResult } from "./send-phase.ts";

/**
 * What the merge and send phases did, as the report counts it. Its rejects
 * are the rows the service refused (rows refused while reading are the read
 * phase's).
 */
export interface SendCounts extends RejectTally {
  imported: number;
  /** Rows merged into a later row of the same person. */
  duplicates: number;
  /** People left out as the last run sent them (change-only). */
  unchanged: number;
  batches: number;
  batchesResumed: number;
  requests: number;
  /** In batch order, whatever order the answers came in. */
  importIds: string[];
  /** One line per batch the service counted otherwise than it was sent. */
  warnings: string[];
  /** Requests whose answer counted otherwise than the people sent, in the order the answers came. */
  countMismatches: CountMismatch[];
}

/**
 * Counts the merge and send phases as their results come: each batch's
 * answer (or an earlier run's, for a resumed batch) and each person held
 * back as unchanged. `counts()` is the phases' counts as a value.
 */
export class SendTally {
  readonly #outcomes = new RowOutcomes();
  #batches = 0;
  #batchesResumed = 0;
  #requests = 0;
  readonly #idsByBatch: string[][] = [];
  readonly #warnings: string[] = [];
  readonly #mismatches: CountMismatch[] = [];

  /** Counts one batch's result; returns the people it imported and the rows it refused. */
  add(result: BatchResult): { imported: number; rejected: number } {
    const outcomes = this.#outcomes;
    this.#batches++;
    if (result.resumed) this.#batchesResumed++;
    this.#requests += result.requests;
    this.#idsByBatch[result.index] = result.importIds;
    const before = { imported: outcomes.imported, rejected: outcomes.rejected };
    const refused = new Map(result.refusedEntries.map((r) => [r.entry, r.problems]));
    for (const entry of result.entries) {
      const problems = refused.get(entry);
      if (problems === undefined) outcomes.accept(entry);
      else outcomes.refuse(entry, problems);
    }
    for (const m of result.countMismatches ?? []) {
      this.#mismatches.push(m);
      this.#warnings.push(countMismatchWarning(m));
    }
    if (result.countMismatch && result.countMismatches === undefined) {
      this.#warnings.push(
        `batch ${result.index}: the service counted a different number of people than were sent`,
      );
    }
    return { imported: outcomes.imported - before.imported, rejected: outcomes.rejected - before.rejected };
  }

  /** A person the change state held back: the same as the last run sent. */
  hold(entry: BatchEntry): void {
    this.#outcomes.hold(entry);
  }

  /** Rows the service refused, with its problems: their cells go to the rejects file at the end. */
  get refusedRows(): ReadonlyMap<number, readonly RowProblem[]> {
    return this.#outcomes.refused;
  }

  get imported(): number {
    return this.#outcomes.imported;
  }
  get duplicates(): number {
    return this.#outcomes.duplicates;
  }
  get rejected(): number {
    return this.#outcomes.rejected;
  }
  get batches(): number {
    return this.#batches;
  }
  get batchesResumed(): number {
    return this.#batchesResumed;
  }
  get requests(): number {
    return this.#requests;
  }

  counts(): SendCounts {
    const o = this.#outcomes;
    return {
      imported: o.imported,
      duplicates: o.duplicates,
      unchanged: o.unchanged,
      rejected: o.rejected,
      rejectedByReason: { ...o.tally.rejectedByReason },
      rejectedByCode: { ...o.tally.rejectedByCode },
      batches: this.#batches,
      batchesResumed: this.#batchesResumed,
      requests: this.#requests,
      importIds: this.#idsByBatch.flat(),
      warnings: [...this.#warnings],
      countMismatches: [...this.#mismatches],
    };
  }
}
