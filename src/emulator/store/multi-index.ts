/**
 * key → ids, holding a bare string for the common single id so a million
 * people do not cost a million arrays.
 */
export class MultiIndex {
  readonly #map = new Map<string, string | string[]>();

  add(key: string, id: string): void {
    const cur = this.#map.get(key);
    if (cur === undefined) this.#map.set(key, id);
    else if (typeof cur === "string") {
      if (cur !== id) this.#map.set(key, [cur, id]);
    } else if (!cur.includes(id)) cur.push(id);
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

  get(key: string): readonly string[] {
    const cur = this.#map.get(key);
    if (cur === undefined) return [];
    return typeof cur === "string" ? [cur] : cur;
  }

  clear(): void {
    this.#map.clear();
  }
}
