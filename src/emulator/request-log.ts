/** One answered request, in the order the emulator answered them. */
export interface JournalEntry {
  seq: number;
  /** Epoch milliseconds when the answer was recorded. */
  at: number;
  route: string;
  status: string;
}

/** Entries kept for GET /__emulator/requests/journal: enough for a test's run, bounded for a long-lived emulator. */
const JOURNAL_SIZE = 10_000;

/**
 * Counts of answered requests by route (operationId) and status, for GET
 * /__emulator/requests, and the last answers in order, for tests that must
 * say which request went out before which.
 */
export class RequestLog {
  #counts = new Map<string, Map<string, number>>();
  #total = 0;
  #journal: JournalEntry[] = [];
  #seq = 0;

  record(route: string, status: number | "dropped"): void {
    this.#total++;
    this.#journal.push({ seq: ++this.#seq, at: Date.now(), route, status: String(status) });
    if (this.#journal.length > JOURNAL_SIZE) this.#journal.splice(0, this.#journal.length - JOURNAL_SIZE);
    let byStatus = this.#counts.get(route);
    if (!byStatus) {
      byStatus = new Map();
      this.#counts.set(route, byStatus);
    }
    const key = String(status);
    byStatus.set(key, (byStatus.get(key) ?? 0) + 1);
  }

  reset(): void {
    this.#counts.clear();
    this.#total = 0;
    this.#journal = [];
  }

  /** Answers recorded after sequence number `since` (oldest first); numbers keep rising across resets. */
  journal(since = 0): JournalEntry[] {
    return this.#journal.filter((e) => e.seq > since);
  }

  summary(): {
    total: number;
    byRoute: Record<string, Record<string, number>>;
    byStatus: Record<string, number>;
    counts: { route: string; status: string; count: number }[];
  } {
    const byRoute: Record<string, Record<string, number>> = {};
    const byStatus: Record<string, number> = {};
    const counts: { route: string; status: string; count: number }[] = [];
    for (const [route, statuses] of this.#counts) {
      const r: Record<string, number> = {};
      for (const [status, count] of statuses) {
        r[status] = count;
        byStatus[status] = (byStatus[status] ?? 0) + count;
        counts.push({ route, status, count });
      }
      byRoute[route] = r;
    }
    return { total: this.#total, byRoute, byStatus, counts };
  }
}
