// What a column's menu offers and how its values name a target: a person
// field or fullName (the contract's words, from src), or a property.
import { PERSON_FIELDS, type PersonFieldName } from "../../../api/schemas/person.ts";
import {
  FULL_NAME,
  IDENTIFYING_FIELDS,
  identifierPropertyId,
  propertyIdentifier,
} from "../../../config/column-targets.ts";
import type { ColumnTarget } from "../../../config/import-job.ts";
import type { ColumnSuggestion } from "../../../suggest/suggestion.ts";

type FieldTarget = PersonFieldName | typeof FULL_NAME;

/** Each field as its menu names it. */
const FIELD_WORDS: Record<FieldTarget, string> = {
  email: "Email",
  phone: "Phone",
  firstName: "First name",
  lastName: "Last name",
  fullName: "Full name (split into first and last)",
  isOptedOut: "Opted out (yes/no)",
  lastContactDate: "Last contact date",
  additionalEmails: "Additional emails",
  additionalPhones: "Additional phones",
};

/** The menu's fields, in the contract's order. */
export const FIELD_TARGETS: readonly FieldTarget[] = [...PERSON_FIELDS, FULL_NAME];

const isFieldTarget = (key: string): key is FieldTarget => (FIELD_TARGETS as readonly string[]).includes(key);

export const fieldWords = (field: FieldTarget): string => FIELD_WORDS[field];

// A property by its name and type, in a menu's value; one by id is named as an identifier names it.
const NAMED = "named:";

/** A target as a menu's value: "" for none. */
export function targetKey(to: ColumnSuggestion["to"] | undefined): string {
  if (to === null || to === undefined) return "";
  if (typeof to === "string") return to;
  if ("propertyId" in to) return propertyIdentifier(to.propertyId);
  return `${NAMED}${JSON.stringify([to.name, to.propertyType])}`;
}

/** The target a menu's value names; null for none. */
export function targetOf(key: string): ColumnTarget | null {
  if (isFieldTarget(key)) return key;
  const propertyId = identifierPropertyId(key);
  if (propertyId !== undefined) return { propertyId };
  if (key.startsWith(NAMED)) {
    const [name, propertyType] = JSON.parse(key.slice(NAMED.length)) as [string, string];
    return { name, propertyType };
  }
  return null;
}

/** How a property target reads in a menu. */
export function propertyWords(key: string): string | undefined {
  const to = targetOf(key);
  if (to === null || typeof to === "string") return undefined;
  return `Property ${"propertyId" in to ? to.propertyId : to.name}`;
}

/** The identifiers the chosen targets allow: email or phone when a column fills it, or a property a column fills. */
export function identifierChoices(keys: ReadonlySet<string>): [string, string][] {
  const choices: [string, string][] = [];
  for (const f of IDENTIFYING_FIELDS) if (keys.has(f)) choices.push([f, FIELD_WORDS[f]]);
  for (const k of keys) {
    const id = identifierPropertyId(k);
    if (id !== undefined) choices.push([k, `Property ${id}`]);
  }
  if (!choices.length) {
    const [first] = IDENTIFYING_FIELDS;
    choices.push([first, `${FIELD_WORDS[first]} (no column imported as ${first} yet)`]);
  }
  return choices;
}
