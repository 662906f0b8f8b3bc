/** Counts of answered requests by route (operationId) and status, for GET /__emulator/requests. */
export class RequestLog {
  #counts = new Map<string, Map<string, number>>();
  #total = 0;

  record(route: string, status: number | "dropped"): void {
    this.#total++;
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
