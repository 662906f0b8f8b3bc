import type { ColumnMapping, Transform } from "../../../config/import-job.ts";

/** One standard column of a CRM export: the headers it goes by and where it goes. */
export interface PresetRule {
  to: ColumnMapping["to"];
  /** Synonyms, matched ignoring case, spaces and punctuation; the first present wins. */
  headers: readonly string[];
  transforms: ColumnMapping["transforms"];
}

export interface Preset {
  name: string;
  description: string;
  rules: readonly PresetRule[];
}

const EMAIL_HEADERS = ["Email", "Email Address", "E-mail", "E-mail Address", "Primary Email"];
const FIRST_NAME_HEADERS = ["First Name", "Firstname", "Given Name", "Forename"];
const LAST_NAME_HEADERS = ["Last Name", "Lastname", "Surname", "Family Name"];

/** The transforms a contact field takes in every preset: addresses in lower case, numbers in E.164, lists split. */
const FIELD_TRANSFORMS = {
  email: ["lowercase"],
  firstName: [],
  lastName: [],
  phone: ["phone"],
  additionalPhones: ["split", "phone"],
  additionalEmails: ["split", "lowercase"],
} as const satisfies Record<string, readonly Transform[]>;

/** A preset's rule for a contact field, under the headers that preset's export uses. */
export function fieldRule(to: keyof typeof FIELD_TRANSFORMS, headers: readonly string[]): PresetRule {
  return { to, headers, transforms: [...FIELD_TRANSFORMS[to]] };
}

/** The email and the names, as every export heads them, with a preset's own extra headers for the names. */
export function contactRules(
  extra: { firstName?: readonly string[]; lastName?: readonly string[] } = {},
): PresetRule[] {
  return [
    fieldRule("email", EMAIL_HEADERS),
    fieldRule("firstName", [...FIRST_NAME_HEADERS, ...(extra.firstName ?? [])]),
    fieldRule("lastName", [...LAST_NAME_HEADERS, ...(extra.lastName ?? [])]),
  ];
}
