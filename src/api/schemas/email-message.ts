import { z } from "zod";
import { DateTimeString, Id, PageInfoRequest } from "./common.ts";

/** Email message (spec 2.8). */
export const EmailMessage = z.looseObject({
  id: Id,
  recipientId: z.string().nullable().optional(),
  senderId: z.string().nullable().optional(),
  status: z.string().optional(),
  type: z.string().optional(),
  sentAt: DateTimeString.nullable().optional(),
  scheduledSendTime: DateTimeString.nullable().optional(),
  createdAt: DateTimeString.optional(),
  studyId: z.string().nullable().optional(),
  participantId: z.string().nullable().optional(),
  messageCampaignId: z.string().nullable().optional(),
  recipientEmail: z.string().nullable().optional(),
  senderEmail: z.string().nullable().optional(),
  subject: z.string().nullable().optional(),
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
