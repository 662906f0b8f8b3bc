import { z } from "zod";
import { DateTimeString, Id, PageInfoRequest } from "./common.ts";

/** Participant as returned (spec 2.6). Value sets beyond the examples are open. */
export const Participant = z.looseObject({
  participantId: Id,
  personId: Id,
  studyId: Id,
  email: z.string().nullable().optional(),
  additionalEmails: z.array(z.string()).optional(),
  phone: z.string().nullable().optional(),
  additionalPhones: z.array(z.string()).optional(),
  status: z.string().optional(),
  approvalStatus: z.string().optional(),
  screenerState: z.string().optional(),
  invitedToStudyAt: DateTimeString.nullable().optional(),
  approvedAt: DateTimeString.nullable().optional(),
  screenerSentAt: DateTimeString.nullable().optional(),
  testCompletedAt: DateTimeString.nullable().optional(),
  interviewStartTime: DateTimeString.nullable().optional(),
  screenerResponseDate: DateTimeString.nullable().optional(),
  addedToStudyAt: DateTimeString.nullable().optional(),
  note: z.looseObject({ note: z.string(), createdByUserId: z.string() }).nullable().optional(),
});
export type Participant = z.infer<typeof Participant>;

/** POST /studies/{studyId}/participants/search body (spec 4.5); filters are not shown. */
export const SearchParticipantsBody = z.looseObject({ pageInfo: PageInfoRequest.optional() });
export type SearchParticipantsBody = z.infer<typeof SearchParticipantsBody>;
