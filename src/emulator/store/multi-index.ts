/**
 * key → ids, holding a bare string for the common single id so a million
 * people do not cost a million arrays.
 */
export class MultiIndex {
  readonly #map = new Map<string, string | string[]>();

  /**
   * Adds `id` under `key` unless it is there already. `isNew` says the caller
   * knows `id` is under no key at all, which spares looking for it among the
   * key's ids: under a phone that dozens of people share that means comparing
   * the new id with each of theirs, every one a string elsewhere in memory.
   */
  add(key: string, id: string, isNew = false): void {
    const cur = this.#map.get(key);
    if (cur === undefined) this.#map.set(key, id);
    else if (typeof cur === "string") {
      if (cur !== id) this.#map.set(key, [cur, id]);
    } else if (isNew || !cur.includes(id)) cur.push(id);
  }

  remove(key: string, id: string): void {
    const cur = this.#map.get(key);
    if (cur === undefined) return;
    if (typeof cur === "string") {
      if (cur === id) this.#map.delete(key);
      return;
    }
    const rest = cur.filter((x) => x !== id);
    if (rest.length === 0) this.#map.delete(key);
    else if (rest.length === 1) this.#map.set(key, rest[0] as string);
    else this.#map.set(key, rest);
  }

  /**
   * The ids under `key` as held: none, one, or several (in `get`'s order; not
   * to be changed). For a caller that wants only the first match: `get` builds
   * a list, and an import looks up every person it brings.
   */
  lookup(key: string): string | readonly string[] | undefined {
    return this.#map.get(key);
  }

  get(key: string): readonly string[] {
    const cur = this.#map.get(key);
    if (cur === undefined) return [];
    return typeof cur === "string" ? [cur] : cur;
  }

  clear(): void {
    this.#map.clear();
  }
}
