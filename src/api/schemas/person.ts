import { z } from "zod";
import { SPEC_DEFAULTS } from "../decisions.ts";
import { DateString, DateTimeString, Id } from "./common.ts";

/** A property value of an imported person. The spec does not type it further. */
export const PropertyValue = z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(z.string())]);

export const PersonPropertyById = z.object({ propertyId: Id, value: PropertyValue }).strict();
export const PersonPropertyByName = z
  .object({ name: z.string().min(1), propertyType: z.string().min(1), value: PropertyValue })
  .strict();
export const PersonPropertyInput = z.union([PersonPropertyById, PersonPropertyByName]);
export type PersonPropertyInput = z.infer<typeof PersonPropertyInput>;

/** Person object of an import (spec 4.4). A null first or last name overwrites. */
export const ImportPerson = z
  .object({
    email: z.email().optional(),
    phone: z.string().min(1).optional(),
    firstName: z.string().nullable().optional(),
    lastName: z.string().nullable().optional(),
    isOptedOut: z.boolean().optional(),
    lastContactDate: DateString.optional(),
    additionalEmails: z.array(z.email()).optional(),
    additionalPhones: z.array(z.string().min(1)).optional(),
    properties: z.array(PersonPropertyInput).optional(),
  })
  // The spec makes only question objects strict; unknown person keys are dropped.
  .strip();
export type ImportPerson = z.infer<typeof ImportPerson>;

/** The person fields an import sets (properties aside): what a column of a CSV can fill. */
export const PERSON_FIELDS = ImportPerson.keyof().exclude(["properties"]).options;
export type PersonFieldName = (typeof PERSON_FIELDS)[number];
/** Fields holding a list: several columns may feed them, and their values merge. */
export const LIST_FIELDS: readonly PersonFieldName[] = ["additionalEmails", "additionalPhones"];

/** The identifier selector: email (default), phone, or a unique property's id. */
export const IdentifierSelector = z.string().min(1);

/**
 * POST /studies/{studyId}/participants/import body. The selector and population
 * field names are not shown in the spec; see SPEC_DEFAULTS.
 */
export const ImportParticipantsBody = z
  .object({
    people: z.array(ImportPerson).min(1).max(SPEC_DEFAULTS.maxPeoplePerImport),
    [SPEC_DEFAULTS.importIdentifierField]: IdentifierSelector.default("email"),
    [SPEC_DEFAULTS.importPopulationField]: Id.optional(),
  })
  .superRefine((body, ctx) => {
    const selector = body.identifier;
    body.people.forEach((p, i) => {
      if (selector === "email" && p.email === undefined) {
        ctx.addIssue({
          code: "custom",
          path: ["people", i, "email"],
          message: "email is required when matching by email",
        });
      } else if (selector === "phone" && p.phone === undefined) {
        ctx.addIssue({
          code: "custom",
          path: ["people", i, "phone"],
          message: "phone is required when matching by phone",
        });
      } else if (selector !== "email" && selector !== "phone") {
        const has = p.properties?.some((prop) => "propertyId" in prop && prop.propertyId === selector);
        if (!has) {
          ctx.addIssue({
            code: "custom",
            path: ["people", i, "properties"],
            message: `a value of property ${selector} is required when matching by it`,
          });
        }
      }
    });
  });
export type ImportParticipantsBody = z.infer<typeof ImportParticipantsBody>;
export type ImportParticipantsInput = z.input<typeof ImportParticipantsBody>;

export const ImportResult = z.looseObject({ message: z.string(), count: z.number().int(), importId: Id });
export type ImportResult = z.infer<typeof ImportResult>;

/** PUT /people/{personIdOrEmail}/opted-out (spec 4.7). */
export const UpdateOptedOutBody = z.object({ isOptedOut: z.boolean() }).strict();
export type UpdateOptedOutBody = z.infer<typeof UpdateOptedOutBody>;
export const OptedOutResult = z.looseObject({
  personId: Id,
  isOptedOut: z.boolean(),
  updatedAt: DateTimeString,
});
export type OptedOutResult = z.infer<typeof OptedOutResult>;

/** POST /person, deprecated (spec 4.14). */
export const LegacyOptOutBody = z.object({ email: z.email(), optedOut: z.boolean() }).strict();
export type LegacyOptOutBody = z.infer<typeof LegacyOptOutBody>;
export const LegacyOptOutResult = z.looseObject({ email: z.string(), optedOut: z.boolean() });
export type LegacyOptOutResult = z.infer<typeof LegacyOptOutResult>;
