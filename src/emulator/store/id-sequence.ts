/**
 * Ids are `<prefix>_<n>` so tests can name seeded records (`study_1`) and new
 * ids never collide with loaded ones: loading observes every id.
 */
export class IdSequence {
  readonly #next = new Map<string, number>();

  next(prefix: string): string {
    const n = (this.#next.get(prefix) ?? 0) + 1;
    // Past 2^53, n + 1 is n again and every new id would be the same one.
    if (!Number.isSafeInteger(n)) throw new Error(`no ${prefix} id is left after ${prefix}_${n - 1}`);
    this.#next.set(prefix, n);
    return `${prefix}_${n}`;
  }

  observe(id: string): void {
    const m = /^(.+)_(\d+)$/.exec(id);
    if (!m?.[1] || m[2] === undefined) return;
    const n = Number(m[2]);
    // A number this large is not held exactly (a 19-digit id made from a
    // clock, say), and counting from 1 never reaches it: nothing to reserve.
    if (!Number.isSafeInteger(n)) return;
    if (n > (this.#next.get(m[1]) ?? 0)) this.#next.set(m[1], n);
  }

  clear(): void {
    this.#next.clear();
  }
}
