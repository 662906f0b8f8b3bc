import { z } from "zod";
import { DateTimeString, Id } from "./common.ts";

export const INCENTIVE_TYPES = [
  "MONEY_OR_GIFT_CARD",
  "CUSTOM",
  "RECRUITMENT_FEE",
  "RESPONDENT_MONEY",
] as const;
export const INCENTIVE_STATUSES = ["UNCLAIMED", "CLAIMED", "CANCELED", "ERROR", "SENT", "EXPIRED"] as const;
/** Statuses that never change again (spec 3.4): custom incentives are always SENT. */
export const FINAL_INCENTIVE_STATUSES = ["CLAIMED", "CANCELED", "ERROR", "EXPIRED", "SENT"] as const;

/** Incentive (spec 2.9). recipientEmail is null when deleted, masked without permission. */
export const Incentive = z.looseObject({
  incentiveId: Id.describe("The incentive."),
  // Open sets: the spec speaks of "charity" incentives it never lists, and one
  // unknown value must not make a whole export fail. The known values are above.
  type: z
    .union([z.enum(INCENTIVE_TYPES), z.string()])
    .nullable()
    .describe("MONEY_OR_GIFT_CARD, CUSTOM, RECRUITMENT_FEE or RESPONDENT_MONEY (others may come)."),
  amountCents: z.number().int().nullable().optional().describe("The amount in cents."),
  sentAt: DateTimeString.nullable().optional().describe("When it was sent."),
  recipientEmail: z
    .string()
    .nullable()
    .describe(
      "The recipient's email (personal data); NULL when the recipient was deleted, masked without permission.",
    ),
  personId: z.string().nullable().optional().describe("The person it was sent to."),
  participantId: z.string().nullable().optional().describe("The participant it rewards."),
  studyId: z.string().nullable().optional().describe("The study it belongs to."),
  status: z
    .union([z.enum(INCENTIVE_STATUSES), z.string()])
    .describe("UNCLAIMED, then CLAIMED, CANCELED, ERROR or EXPIRED (spec 3.4); custom incentives are SENT."),
  budgetId: z.string().nullable().optional().describe("The budget it is paid from."),
  customIncentiveId: z.string().nullable().optional().describe("The custom incentive it is, if one."),
  customIncentiveValue: z.string().nullable().optional().describe("The value of a custom incentive."),
});
export type Incentive = z.infer<typeof Incentive>;

export const CUSTOM_INCENTIVE_TYPES = ["STRING", "NUMBER", "MONETARY", "SINGLE_SELECT"] as const;

/** Custom incentive definition (spec 2.10). */
export const CustomIncentive = z.looseObject({
  customIncentiveId: Id.describe("The custom incentive."),
  name: z.string().describe("Its name."),
  description: z.string().optional().describe("Its description."),
  type: z.enum(CUSTOM_INCENTIVE_TYPES).describe("STRING, NUMBER, MONETARY or SINGLE_SELECT."),
  options: z
    .array(z.looseObject({ name: z.string() }))
    .optional()
    .describe("The choices of a SINGLE_SELECT: [{name}]."),
});
export type CustomIncentive = z.infer<typeof CustomIncentive>;
