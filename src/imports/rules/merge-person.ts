import type { ImportPerson } from "../../api/index.ts";

/**
 * A person seen in several rows of a file: which rows are one person
 * (dedupeKey) and how their versions become one (mergePersons).
 */

/**
 * The key rows are deduplicated on: the population and the identifier's value.
 * The service matches people within the population of the request, so the
 * same email in two populations is two people. The population goes first,
 * length-prefixed, so no (population, identifier) pair can spell another's
 * key; no population (workspace-wide) is a scope of its own.
 */
export function dedupeKey(population: string | null, identifier: string): string {
  return population === null
    ? `\u0000${identifier}`
    : `${population.length}:${population}\u0000${identifier}`;
}

function union(
  a: readonly string[] | undefined,
  b: readonly string[] | undefined,
  exclude?: string,
): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  const skip = exclude?.toLowerCase();
  for (const v of [...(a ?? []), ...(b ?? [])]) {
    const k = v.toLowerCase();
    if (seen.has(k) || k === skip) continue;
    seen.add(k);
    out.push(v);
  }
  return out;
}

type Property = NonNullable<ImportPerson["properties"]>[number];
const propertyKey = (p: Property) => ("propertyId" in p ? `id:${p.propertyId}` : `name:${p.name}`);

/**
 * Merges two rows of one person, `later` winning. Field by field: a field the
 * later row has (null included) replaces the earlier value; a field it omits
 * keeps the earlier one. Lists are unions, earlier items first. Properties
 * merge by propertyId or name, later winning. An earlier email or phone that
 * the later row replaced is kept in additionalEmails / additionalPhones, so no
 * contact detail is lost.
 */
export function mergePersons(earlier: ImportPerson, later: ImportPerson): ImportPerson {
  const out: ImportPerson = { ...earlier, ...later };
  const email = out.email;
  const phone = out.phone;
  const extraEmail =
    earlier.email && email && earlier.email.toLowerCase() !== email.toLowerCase() ? [earlier.email] : [];
  const extraPhone = earlier.phone && phone && earlier.phone !== phone ? [earlier.phone] : [];
  if (earlier.additionalEmails || later.additionalEmails || extraEmail.length) {
    out.additionalEmails = union(union(earlier.additionalEmails, extraEmail), later.additionalEmails, email);
  }
  if (earlier.additionalPhones || later.additionalPhones || extraPhone.length) {
    out.additionalPhones = union(union(earlier.additionalPhones, extraPhone), later.additionalPhones, phone);
  }
  if (earlier.properties && later.properties) {
    const byKey = new Map<string, Property>();
    for (const p of earlier.properties) byKey.set(propertyKey(p), p);
    for (const p of later.properties) byKey.set(propertyKey(p), p);
    out.properties = [...byKey.values()];
  }
  for (const k of ["additionalEmails", "additionalPhones"] as const) {
    if (out[k] && out[k].length === 0) delete out[k];
  }
  return out;
}
