import { z } from "zod";
import { DateTimeString, Id, PageInfoRequest } from "./common.ts";

/** Participant as returned (spec 2.6). Value sets beyond the examples are open. */
export const Participant = z.looseObject({
  participantId: Id.describe("The participant: one person's place in one study."),
  personId: Id.describe("The person who is this participant."),
  studyId: Id.describe("The study the participant belongs to."),
  email: z.string().nullable().optional().describe("The person's primary email (personal data)."),
  additionalEmails: z.array(z.string()).optional().describe("The person's other emails (personal data)."),
  phone: z.string().nullable().optional().describe("The person's phone number (personal data)."),
  additionalPhones: z
    .array(z.string())
    .optional()
    .describe("The person's other phone numbers (personal data)."),
  status: z
    .string()
    .optional()
    .describe("Where the participant stands in the study (NOT_STARTED appears; the spec lists no full set)."),
  approvalStatus: z
    .string()
    .optional()
    .describe("The researcher's approval of the participant (HIDDEN appears)."),
  screenerState: z
    .string()
    .optional()
    .describe("How far the participant is with the screener (SCREENER_SENT appears)."),
  invitedToStudyAt: DateTimeString.nullable()
    .optional()
    .describe("When the participant was invited to the study."),
  approvedAt: DateTimeString.nullable().optional().describe("When the participant was approved."),
  screenerSentAt: DateTimeString.nullable()
    .optional()
    .describe("When the screener was sent to the participant."),
  testCompletedAt: DateTimeString.nullable()
    .optional()
    .describe("When the participant completed the study's test."),
  interviewStartTime: DateTimeString.nullable()
    .optional()
    .describe("When the participant's interview starts."),
  screenerResponseDate: DateTimeString.nullable()
    .optional()
    .describe("When the participant answered the screener."),
  addedToStudyAt: DateTimeString.nullable()
    .optional()
    .describe("When the participant was added to the study."),
  note: z
    .looseObject({ note: z.string(), createdByUserId: z.string() })
    .nullable()
    .optional()
    .describe("A note on the participant: {note, createdByUserId}."),
});
export type Participant = z.infer<typeof Participant>;

/** POST /studies/{studyId}/participants/search body (spec 4.5); filters are not shown. */
export const SearchParticipantsBody = z.looseObject({ pageInfo: PageInfoRequest.optional() });
export type SearchParticipantsBody = z.infer<typeof SearchParticipantsBody>;
