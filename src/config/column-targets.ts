import type { PersonFieldName } from "../api/schemas/person.ts";

/**
 * The words a job definition uses for where a column goes and how people are
 * matched: `fullName`, the one-word transforms, the identifier's grammar.
 * Plain data with no import but the contract's types, so that the console's
 * page (a browser script, docs/console.md) takes them from here as the job
 * schema does, and neither writes them again.
 */

/**
 * A column holding a whole name ("Jane Smith", "Smith, Jane", "Dr. Jane Q.
 * Smith Jr."): split into firstName and lastName (parse-full-name). A column
 * mapped to firstName or lastName itself wins for that field.
 */
export const FULL_NAME = "fullName";

/** Transforms written as one word; `date`, `boolean`, `phone`, `split` use their defaults. */
export const TRANSFORM_WORDS = [
  "trim",
  "lowercase",
  "uppercase",
  "titlecase",
  "date",
  "boolean",
  "phone",
  "split",
] as const;
export type TransformWord = (typeof TRANSFORM_WORDS)[number];

/**
 * The transforms of a column whose field a person picks by hand, with no
 * sample to fit them to (the suggestion fits its own to the file's values).
 */
export const USUAL_TRANSFORMS: Partial<Record<PersonFieldName, readonly TransformWord[]>> = {
  email: ["lowercase"],
  phone: ["phone"],
  additionalEmails: ["split", "lowercase"],
  additionalPhones: ["split", "phone"],
  lastContactDate: ["date"],
  isOptedOut: ["boolean"],
};

/** Person fields that identify a person by themselves; any other identifier is a unique property. */
export const IDENTIFYING_FIELDS = ["email", "phone"] as const satisfies readonly PersonFieldName[];

const PROPERTY_IDENTIFIER = "property:";

/** `email`, `phone` or `property:<propertyId>` of a unique property. */
export const IDENTIFIER_PATTERN = new RegExp(`^(${IDENTIFYING_FIELDS.join("|")}|${PROPERTY_IDENTIFIER}.+)$`);

/** The identifier that matches people by a unique property's value. */
export function propertyIdentifier(propertyId: string): string {
  return `${PROPERTY_IDENTIFIER}${propertyId}`;
}

/** The property an identifier names (`property:<propertyId>`), or undefined for email and phone. */
export function identifierPropertyId(identifier: string): string | undefined {
  return identifier.startsWith(PROPERTY_IDENTIFIER)
    ? identifier.slice(PROPERTY_IDENTIFIER.length)
    : undefined;
}
