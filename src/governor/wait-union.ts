/**
 * Wall-clock time spent waiting, however many waits overlap: the length of
 * the union of the waiting intervals. Requests in flight at once wait on the
 * budget together; adding up their waits counted one second of a run up to
 * eight times (a run of 19.1 s reported 109.6 s waited).
 *
 * Waits are told when they end, in any order. Intervals that can no longer
 * meet a later one (they end before every wait still going began) are folded
 * into a total, so memory stays bounded by the waits in flight.
 */
export class WaitUnion {
  /** Length of the intervals folded away. */
  #folded = 0;
  /** Disjoint intervals, sorted by start, not folded yet. */
  #open: Array<[number, number]> = [];
  /** Starts of the waits begun and not yet ended, by their token. */
  readonly #going = new Map<symbol, number>();
  /** The latest start seen: waits are begun (and intervals added) in time order, so none later starts before it. */
  #latestStart = Number.NEGATIVE_INFINITY;

  /** The wall-clock milliseconds covered by at least one ended wait. */
  get ms(): number {
    let sum = this.#folded;
    for (const [start, end] of this.#open) sum += end - start;
    return sum;
  }

  /** A wait begins at `at`; hand the token to `end`. */
  begin(at: number): symbol {
    const token = Symbol("wait");
    this.#going.set(token, at);
    this.#latestStart = Math.max(this.#latestStart, at);
    return token;
  }

  /** The wait of `token` ends at `at`; it counts only when `counted` (a wait too short to matter does not). */
  end(token: symbol, at: number, counted = true): void {
    const start = this.#going.get(token);
    this.#going.delete(token);
    if (start !== undefined && counted) this.add(start, at);
    this.#fold();
  }

  /** Adds one interval [start, end) directly; starts must come in time order (ends may lie ahead). */
  add(start: number, end: number): void {
    this.#latestStart = Math.max(this.#latestStart, start);
    if (!(end > start)) return;
    const merged: Array<[number, number]> = [];
    let lo = start;
    let hi = end;
    for (const [s, e] of this.#open) {
      if (e < lo || s > hi) merged.push([s, e]);
      else {
        lo = Math.min(lo, s);
        hi = Math.max(hi, e);
      }
    }
    merged.push([lo, hi]);
    merged.sort((a, b) => a[0] - b[0]);
    this.#open = merged;
    this.#fold();
  }

  /** Folds the intervals that end before any wait still going, or any later one, can begin. */
  #fold(): void {
    let horizon = this.#latestStart;
    for (const start of this.#going.values()) horizon = Math.min(horizon, start);
    while (this.#open.length > 0) {
      const first = this.#open[0] as [number, number];
      if (first[1] > horizon) break;
      this.#folded += first[1] - first[0];
      this.#open.shift();
    }
  }
}
