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
  incentiveId: Id,
  // Open sets: the spec speaks of "charity" incentives it never lists, and one
  // unknown value must not make a whole export fail. The known values are above.
  type: z.union([z.enum(INCENTIVE_TYPES), z.string()]).nullable(),
  amountCents: z.number().int().nullable().optional(),
  sentAt: DateTimeString.nullable().optional(),
  recipientEmail: z.string().nullable(),
  personId: z.string().nullable().optional(),
  participantId: z.string().nullable().optional(),
  studyId: z.string().nullable().optional(),
  status: z.union([z.enum(INCENTIVE_STATUSES), z.string()]),
  budgetId: z.string().nullable().optional(),
  customIncentiveId: z.string().nullable().optional(),
  customIncentiveValue: z.string().nullable().optional(),
});
export type Incentive = z.infer<typeof Incentive>;

export const CUSTOM_INCENTIVE_TYPES = ["STRING", "NUMBER", "MONETARY", "SINGLE_SELECT"] as const;

/** Custom incentive definition (spec 2.10). */
export const CustomIncentive = z.looseObject({
  customIncentiveId: Id,
  name: z.string(),
  description: z.string().optional(),
  type: z.enum(CUSTOM_INCENTIVE_TYPES),
  options: z.array(z.looseObject({ name: z.string() })).optional(),
});
export type CustomIncentive = z.infer<typeof CustomIncentive>;
