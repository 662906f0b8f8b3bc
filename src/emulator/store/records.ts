import { z } from "zod";
import { PropertyValue, QuestionRequest } from "../../api/index.ts";

/**
 * Records the spec does not shape ("Fields of the person record as returned,
 * and of populations, teams, users … not shown"). These shapes are the
 * emulator's own and appear only in the admin snapshot.
 */
export const PersonRecord = z.object({
  personId: z.string().min(1),
  email: z.string().nullable(),
  phone: z.string().nullable(),
  firstName: z.string().nullable(),
  lastName: z.string().nullable(),
  isOptedOut: z.boolean(),
  contactStatus: z.string(),
  lastContactDate: z.string().nullable(),
  additionalEmails: z.array(z.string()),
  additionalPhones: z.array(z.string()),
  properties: z.array(z.object({ propertyId: z.string(), value: PropertyValue })),
  populationIds: z.array(z.string()),
});
export type PersonRecord = z.infer<typeof PersonRecord>;

/** Contact status that follows isOptedOut (spec 3.5: setting the flag updates it). */
export const CONTACT_STATUS = { optedOut: "OPTED_OUT", contactable: "CONTACTABLE" } as const;
export function contactStatusFor(isOptedOut: boolean): string {
  return isOptedOut ? CONTACT_STATUS.optedOut : CONTACT_STATUS.contactable;
}

type GivenContact = Partial<
  Pick<PersonRecord, "email" | "phone" | "firstName" | "lastName" | "isOptedOut" | "lastContactDate">
>;

/** A new person's contact fields from those given: a missing one is null or not opted out, and the contact status follows. */
export function newContactFields(
  given: GivenContact,
): Required<GivenContact> & Pick<PersonRecord, "contactStatus"> {
  const isOptedOut = given.isOptedOut ?? false;
  return {
    email: given.email ?? null,
    phone: given.phone ?? null,
    firstName: given.firstName ?? null,
    lastName: given.lastName ?? null,
    isOptedOut,
    contactStatus: contactStatusFor(isOptedOut),
    lastContactDate: given.lastContactDate ?? null,
  };
}

export const Population = z.object({ populationId: z.string().min(1), name: z.string() });
export type Population = z.infer<typeof Population>;

export const PropertyGroup = z.object({ propertyGroupId: z.string().min(1), name: z.string() });
export type PropertyGroup = z.infer<typeof PropertyGroup>;

export const Team = z.object({ teamId: z.string().min(1), name: z.string() });
export type Team = z.infer<typeof Team>;

export const User = z.object({
  userId: z.string().min(1),
  teamId: z.string(),
  fullname: z.string(),
  email: z.string(),
  emailAccountId: z.string(),
});
export type User = z.infer<typeof User>;

/** A workspace question template: a concrete (non-template) question that template requests expand into. */
export const QuestionTemplate = z.object({
  questionTemplateId: z.string().min(1),
  question: QuestionRequest,
});
export type QuestionTemplate = z.infer<typeof QuestionTemplate>;

export const ImportRecord = z.object({
  importId: z.string().min(1),
  studyId: z.string(),
  count: z.number().int(),
  identifier: z.string(),
  populationId: z.string().nullable(),
  createdAt: z.string(),
});
export type ImportRecord = z.infer<typeof ImportRecord>;
