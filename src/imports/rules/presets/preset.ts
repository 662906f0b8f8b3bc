import type { ColumnMapping } from "../../../config/import-job.ts";

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

export const EMAIL_HEADERS = ["Email", "Email Address", "E-mail", "E-mail Address", "Primary Email"];
export const FIRST_NAME_HEADERS = ["First Name", "Firstname", "Given Name", "Forename"];
export const LAST_NAME_HEADERS = ["Last Name", "Lastname", "Surname", "Family Name"];
