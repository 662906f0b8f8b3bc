import { normalizeHeader } from "../imports/index.ts";
import type { HeaderReading } from "./header-match.ts";
import { ORGANISATION_WORDS } from "./header-words.ts";

export interface RepeatedHeaders {
  /** 1-based occurrence of each column among those with its header, for headers that repeat; else undefined. */
  occurrence: (number | undefined)[];
  /** For each repeated column, whether it sits among the organisation's columns. */
  organisation: boolean[];
  /** The column of each repeated header that is the person's, by normalised header. */
  personColumn: Map<string, number>;
}

function section(reading: HeaderReading, key: string): "person" | "organisation" | undefined {
  if ("kind" in reading) return "person";
  if ("fullName" in reading) return "person";
  const words = key.split(" ");
  if (words.some((w) => ORGANISATION_WORDS.has(w))) return "organisation";
  return undefined;
}

/**
 * Headers a file repeats (HubSpot's contact `Phone Number` and, further on,
 * the associated company's): each column's occurrence, and which one is the
 * person's. Walking the headers left to right, a header of the organisation
 * (`Company Name`, `Associated Company`) opens its section and a header of
 * the person (`Email`, `First Name`) that does not repeat opens the
 * person's; the person's column is the first occurrence in a person's
 * section, else the first.
 */
export function readRepeatedHeaders(
  headers: readonly string[],
  readings: readonly HeaderReading[],
  keys: readonly string[],
): RepeatedHeaders {
  const byName = new Map<string, number[]>();
  headers.forEach((h, i) => {
    const k = normalizeHeader(h);
    byName.set(k, [...(byName.get(k) ?? []), i]);
  });
  const repeats = (i: number) => (byName.get(normalizeHeader(headers[i] as string))?.length ?? 0) > 1;
  const occurrence: (number | undefined)[] = [];
  const organisation: boolean[] = [];
  let current: "person" | "organisation" = "person";
  headers.forEach((h, i) => {
    if (!repeats(i)) {
      current = section(readings[i] as HeaderReading, keys[i] as string) ?? current;
      occurrence.push(undefined);
      organisation.push(false);
      return;
    }
    const same = byName.get(normalizeHeader(h)) as number[];
    occurrence.push(same.indexOf(i) + 1);
    organisation.push(current === "organisation");
  });
  const personColumn = new Map<string, number>();
  for (const [key, same] of byName) {
    if (same.length < 2) continue;
    personColumn.set(key, same.find((i) => !organisation[i]) ?? (same[0] as number));
  }
  return { occurrence, organisation, personColumn };
}
