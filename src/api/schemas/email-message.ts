import { z } from "zod";
import { DateTimeString, Id, PageInfoRequest } from "./common.ts";

/** Email message (spec 2.8). */
export const EmailMessage = z.looseObject({
  id: Id.describe("The email message."),
  recipientId: z.string().nullable().optional().describe("The person it was sent to."),
  senderId: z.string().nullable().optional().describe("The user who sent it."),
  status: z.string().optional().describe("Delivery status (DELIVERED appears; the spec lists no full set)."),
  type: z.string().optional().describe("The kind of message (the spec lists no values)."),
  sentAt: DateTimeString.nullable().optional().describe("When it was sent."),
  scheduledSendTime: DateTimeString.nullable().optional().describe("When it is scheduled to be sent."),
  createdAt: DateTimeString.optional().describe("When it was created."),
  studyId: z.string().nullable().optional().describe("The study it belongs to."),
  participantId: z.string().nullable().optional().describe("The participant it was sent to."),
  messageCampaignId: z.string().nullable().optional().describe("The campaign it was part of."),
  recipientEmail: z.string().nullable().optional().describe("The recipient's email (personal data)."),
  senderEmail: z.string().nullable().optional().describe("The sender's email."),
  subject: z.string().nullable().optional().describe("The subject line."),
});
export type EmailMessage = z.infer<typeof EmailMessage>;

export const FILTER_GROUPS = ["message", "person", "incentive", "participant"] as const;
export type FilterGroup = (typeof FILTER_GROUPS)[number];

/** One filter condition; NUMBER_OF_DAYS_AGO takes its day count in `amount`. */
export const FilterCondition = z
  .object({
    propertyType: z.string().min(1),
    propertyName: z.string().min(1),
    operator: z.string().min(1),
    value: z.string(),
    amount: z.number().optional(),
  })
  .strict()
  .superRefine((c, ctx) => {
    if (c.value === "NUMBER_OF_DAYS_AGO" && c.amount === undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["amount"],
        message: "amount is required with NUMBER_OF_DAYS_AGO",
      });
    }
  });
export type FilterCondition = z.infer<typeof FilterCondition>;

/** A filters item has exactly one key naming its group (spec 4.12). */
export const FilterItem = z
  .partialRecord(z.enum(FILTER_GROUPS), FilterCondition)
  .refine((o) => Object.keys(o).length === 1, { message: "each filter has exactly one group key" });
export type FilterItem = z.infer<typeof FilterItem>;

export const EmailFilter = z
  .object({ operator: z.enum(["AND", "OR"]), filters: z.array(FilterItem) })
  .strict();
export type EmailFilter = z.infer<typeof EmailFilter>;

export const SearchEmailsBody = z
  .object({
    filter: EmailFilter.optional(),
    studyId: z.string().optional(),
    teamId: z.string().optional(),
    userId: z.string().optional(),
    populationId: z.string().optional(),
    pageInfo: PageInfoRequest.optional(),
  })
  .strict();
export type SearchEmailsBody = z.infer<typeof SearchEmailsBody>;
