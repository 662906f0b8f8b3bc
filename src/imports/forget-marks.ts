import { Cluster, type Redis } from "ioredis";
import { bucketOf, stampInto } from "./sent-stamps.ts";
import { personDigest } from "./unverified-people.ts";

/**
 * The change-only state's fields of one person (sent-state.ts): a 64-bit hash
 * of population and identifier value, and the field of their first rows'
 * version (its last byte complemented). The state keeps nothing else of them.
 */
function sentFields(population: string | null, key: string): { first: number; fields: Buffer[] } {
  const stamp = new Uint32Array(4);
  stampInto(population, key, "", stamp, 0);
  const field = Buffer.alloc(8);
  field.writeUInt32BE(stamp[0] as number, 0);
  field.writeUInt32BE(stamp[1] as number, 4);
  const firstRows = Buffer.from(field);
  firstRows[7] = 255 - (firstRows[7] as number);
  return { first: stamp[0] as number, fields: [field, firstRows] };
}

/** Keys matching a pattern; on a Cluster, of every master, since each scope's keys sit in its own slot. */
async function scanKeys(redis: Redis | Cluster, pattern: string): Promise<string[]> {
  const nodes: Redis[] = redis instanceof Cluster ? redis.nodes("master") : [redis];
  const keys: string[] = [];
  for (const node of nodes) {
    let cursor = "0";
    do {
      const [next, found] = await node.scan(cursor, "MATCH", pattern, "COUNT", 1000);
      cursor = next;
      keys.push(...found);
    } while (cursor !== "0");
  }
  return keys;
}

/**
 * Removes people from the change-only state of every scope under the prefix,
 * whatever layout each uses: each bucket key names its layout's bits and its
 * bucket, and only the buckets the person's fields fall in are asked. `keys`
 * are identifier values as imports match them (an email in lower case, a
 * phone as sent); `populations` every population a job could have sent them
 * with (null for none). Returns the fields removed.
 */
export async function forgetSentState(
  redis: Redis | Cluster,
  prefix: string,
  keys: readonly string[],
  populations: readonly (string | null)[],
): Promise<number> {
  const candidates = keys.flatMap((k) => populations.map((p) => sentFields(p, k)));
  let removed = 0;
  for (const key of await scanKeys(redis, `${prefix}:sent:{*}:b*`)) {
    const m = /:b(\d{1,2}):([0-9a-f]+)$/.exec(key);
    if (!m) continue;
    const bits = Number(m[1]);
    const bucket = Number.parseInt(m[2] as string, 16);
    const fields = candidates
      .filter((c) => bucketOf(Uint32Array.of(c.first), bits) === bucket)
      .flatMap((c) => c.fields);
    if (fields.length) removed += await redis.hdel(key, ...fields);
  }
  return removed;
}

/** Removes people's unverified marks (unverified-people.ts) from every study under the prefix. */
export async function forgetUnverifiedMarks(
  redis: Redis | Cluster,
  prefix: string,
  values: readonly { identifier: string; value: string }[],
): Promise<number> {
  const digests = values.map((v) => personDigest(v.identifier, v.value));
  if (!digests.length) return 0;
  let removed = 0;
  for (const key of await scanKeys(redis, `${prefix}:unverified:{*}:people`))
    removed += await redis.hdel(key, ...digests);
  return removed;
}
