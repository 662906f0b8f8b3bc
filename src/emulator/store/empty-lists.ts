import type { PersonRecord } from "./records.ts";

/*
 * Empty lists every person record may share. A person's arrays are replaced,
 * never changed in place (store.ts), so the people an import creates without
 * additional emails, phones, property values or populations can all point at
 * one empty array each instead of carrying four new ones apiece (1.2 million
 * arrays for 300,000 people, which the garbage collector then walks).
 * Frozen so that code breaking the rule fails loudly instead of changing
 * every such person at once; typed as the record's mutable arrays because
 * that is the type the records declare.
 */
export const NO_STRINGS = Object.freeze([]) as unknown as string[];
export const NO_PROPERTY_VALUES = Object.freeze([]) as unknown as PersonRecord["properties"];

/** A copy of `list` for a person record, or the shared empty list when there is nothing to copy. */
export function ownStrings(list: readonly string[] | undefined): string[] {
  return list === undefined || list.length === 0 ? NO_STRINGS : list.slice();
}
