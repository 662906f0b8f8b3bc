import { z } from "zod";
import { DateString, DateTimeString, Id } from "./common.ts";
import { Screener } from "./screener.ts";

export const STUDY_TYPES = ["SURVEY", "INTERVIEWS", "UNMODERATED_TEST", "GROUP_INTERVIEW"] as const;
export const RECRUITMENT_STRATEGIES = ["IN_SERVICE", "EXTERNAL"] as const;
export const STUDY_STATUSES = ["DRAFT", "ACTIVE", "PAUSED", "CLOSED"] as const;

/** The fields of a study's incentive that a PATCH may set; incentiveType and currency are returned only. */
const settableIncentive = {
  incentiveBudgetId: z.string().optional(),
  amount: z.number().optional(),
  customIncentiveId: z.string().optional(),
  defaultCustomIncentiveValue: z.string().optional(),
};

export const StudyIncentive = z.looseObject({
  incentiveType: z.string().optional(),
  ...settableIncentive,
  currency: z.string().optional(),
});

/** The fields of a study plan that a PATCH may set, those before its incentive and those after. */
const settablePlan = {
  name: z.string().optional(),
  externalName: z.string().optional(),
  description: z.string().optional(),
  externalDescription: z.string().optional(),
  startDate: DateString.optional(),
  endDate: DateString.optional(),
  researchPlanUrl: z.string().optional(),
  participationLimit: z.number().int().optional(),
  consentFormId: z.string().optional(),
};
const settablePlanAfterIncentive = {
  includeScreener: z.boolean().optional(),
  brandingConfigId: z.string().optional(),
  language: z.string().optional(),
};

/** Study plan as returned (spec 2.2). */
export const StudyPlan = z.looseObject({
  ...settablePlan,
  incentive: StudyIncentive.optional(),
  ...settablePlanAfterIncentive,
  scheduler: z.looseObject({ interviewDurationMinutes: z.number().int().optional() }).optional(),
});

export const StudyOwner = z.looseObject({
  userId: z.string(),
  emailAccountId: z.string().optional(),
  fullname: z.string().optional(),
  email: z.string().optional(),
});

/** Study as returned (spec 2.1). */
export const Study = z.looseObject({
  studyId: Id,
  studyType: z.enum(STUDY_TYPES),
  recruitmentStrategy: z.enum(RECRUITMENT_STRATEGIES),
  status: z.enum(STUDY_STATUSES),
  studyPlan: StudyPlan,
  createdAt: DateTimeString,
  createdFromTemplateId: z.string().nullable(),
  owners: z.array(StudyOwner),
  screener: Screener.nullable().optional(),
});
export type Study = z.infer<typeof Study>;

/**
 * PATCH /studies/{studyId} body (spec 4.3). Only the accepted fields; the
 * returned-only ones (incentiveType, currency, scheduler) are refused.
 */
export const UpdateStudyBody = z
  .object({
    studyPlan: z
      .object({
        ...settablePlan,
        incentive: z.object(settableIncentive).strict().optional(),
        ...settablePlanAfterIncentive,
      })
      .strict(),
  })
  .strict();
export type UpdateStudyBody = z.infer<typeof UpdateStudyBody>;
