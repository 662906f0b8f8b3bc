import { z } from "zod";
import { DateTimeString, Id } from "./common.ts";

/** Spec 8 limits of a screener. */
export const SCREENER_LIMITS = {
  minQuestions: 1,
  maxQuestions: 50,
  minOptions: 1,
  maxOptions: 25,
  minMatrixColumns: 1,
  maxMatrixColumns: 25,
  maxMatrixColumnLength: 40,
  minMatrixRows: 1,
  maxMatrixRows: 25,
  maxMatrixRowLength: 100,
} as const;

export const SCREENER_TYPES = [
  "NATIVE",
  "SURVEY_PROVIDER_A",
  "FORM_PROVIDER_B",
  "SURVEY_PROVIDER_C",
  "CUSTOM_LINK",
] as const;
export const EXTERNAL_SETUP_STATUSES = ["IN_PROGRESS", "READY", "FAILED"] as const;
export const SIMPLE_TYPES = ["SHORT_FORM", "LONG_FORM", "DATE", "NUMBER"] as const;
export const OPTION_TYPES = ["SINGLE_SELECT", "MULTI_SELECT"] as const;
/** Extra option values a rule may name when the question enables them (spec 2.5). */
export const OTHER_VALUE = "OTHER";
export const NONE_VALUE = "NONE";

// ---- request shapes (spec 2.5): every object rejects unknown properties ----

export const OptionValueRequest = z
  .object({ value: z.string(), mappedToPropertyOptionId: z.string().optional() })
  .strict();

export const MatrixRowRequest = z
  .object({
    value: z.string().max(SCREENER_LIMITS.maxMatrixRowLength),
    mappedToPropertyId: z.string().optional(),
  })
  .strict();

export const RuleRequest = z
  .object({
    operator: z.string(),
    optionValues: z.array(z.string()),
    action: z.string().optional(),
    qualificationLogic: z.string().optional(),
  })
  .strict();
export type RuleRequest = z.infer<typeof RuleRequest>;

const options = z.array(OptionValueRequest).min(SCREENER_LIMITS.minOptions).max(SCREENER_LIMITS.maxOptions);

export const TemplateQuestionRequest = z
  .object({
    category: z.literal("template"),
    questionTemplateId: Id,
    name: z.string().optional(),
    description: z.string().optional(),
    isRequired: z.boolean().optional(),
  })
  .strict();

/** The fields every question request but a template's has (a template's are overrides, all optional). */
const questionRequestBase = {
  name: z.string(),
  description: z.string().optional(),
  isRequired: z.boolean().default(true),
};

export const SimpleQuestionRequest = z
  .object({
    category: z.literal("simple"),
    type: z.enum(SIMPLE_TYPES),
    ...questionRequestBase,
    mappedToPropertyId: z.string().optional(),
  })
  .strict();

/** Each rule's optionValues must name an option, or OTHER / NONE when enabled. */
function checkRuleValues(
  q: { options: { value: string }[]; rules?: RuleRequest[] | undefined },
  extras: string[],
  ctx: z.RefinementCtx,
): void {
  const allowed = new Set([...q.options.map((o) => o.value), ...extras]);
  q.rules?.forEach((rule, r) => {
    rule.optionValues.forEach((v, i) => {
      if (!allowed.has(v)) {
        ctx.addIssue({
          code: "custom",
          path: ["rules", r, "optionValues", i],
          message: `Rule option value "${v}" does not reference an option of the question`,
        });
      }
    });
  });
}

export const OptionQuestionRequest = z
  .object({
    category: z.literal("option"),
    type: z.enum(OPTION_TYPES),
    ...questionRequestBase,
    rules: z.array(RuleRequest).optional(),
    mappedToPropertyId: z.string().optional(),
    randomizeOrder: z.boolean().default(false),
    includeOther: z.boolean().default(false),
    otherDisplayText: z.string().optional(),
    includeNoneOfTheAbove: z.boolean().default(false),
    options,
  })
  .strict()
  .superRefine((q, ctx) => {
    if (q.otherDisplayText !== undefined && !q.includeOther) {
      ctx.addIssue({
        code: "custom",
        path: ["otherDisplayText"],
        message: "otherDisplayText may be supplied only when includeOther is true",
      });
    }
    const extras = [
      ...(q.includeOther ? [OTHER_VALUE] : []),
      ...(q.includeNoneOfTheAbove ? [NONE_VALUE] : []),
    ];
    checkRuleValues(q, extras, ctx);
  });

export const DropdownQuestionRequest = z
  .object({
    category: z.literal("dropdown"),
    type: z.literal("DROPDOWN"),
    ...questionRequestBase,
    rules: z.array(RuleRequest).optional(),
    mappedToPropertyId: z.string().optional(),
    options,
  })
  .strict()
  .superRefine((q, ctx) => checkRuleValues(q, [], ctx));

export const MatrixQuestionRequest = z
  .object({
    category: z.literal("matrix"),
    type: z.literal("MATRIX"),
    ...questionRequestBase,
    columns: z
      .array(z.string().max(SCREENER_LIMITS.maxMatrixColumnLength))
      .min(SCREENER_LIMITS.minMatrixColumns)
      .max(SCREENER_LIMITS.maxMatrixColumns),
    rows: z.array(MatrixRowRequest).min(SCREENER_LIMITS.minMatrixRows).max(SCREENER_LIMITS.maxMatrixRows),
  })
  .strict();

export const QuestionRequest = z.discriminatedUnion("category", [
  TemplateQuestionRequest,
  SimpleQuestionRequest,
  OptionQuestionRequest,
  DropdownQuestionRequest,
  MatrixQuestionRequest,
]);
export type QuestionRequest = z.infer<typeof QuestionRequest>;
export type QuestionRequestInput = z.input<typeof QuestionRequest>;

/** PUT /studies/{studyId}/screener body (spec 4.1). */
export const ReplaceScreenerBody = z
  .object({
    showSchedulerToQualified: z.boolean().default(false),
    qualifyByDefault: z.boolean().default(false),
    questions: z.array(QuestionRequest).min(SCREENER_LIMITS.minQuestions).max(SCREENER_LIMITS.maxQuestions),
  })
  .strict();
export type ReplaceScreenerBody = z.infer<typeof ReplaceScreenerBody>;
export type ReplaceScreenerInput = z.input<typeof ReplaceScreenerBody>;

// ---- response shapes (spec 2.3, 2.4): unknown fields accepted ----

const questionBase = {
  id: Id,
  workspaceId: Id,
  isRequired: z.boolean(),
  questionTemplateId: z.string().optional(),
  name: z.string().optional(),
  description: z.string().optional(),
};
const OptionValue = z.looseObject({
  id: z.string().optional(),
  value: z.string(),
  mappedToPropertyOptionId: z.string().optional(),
});
const Rule = z.looseObject({
  operator: z.string(),
  optionValues: z.array(z.string()),
  action: z.string().optional(),
  qualificationLogic: z.string().optional(),
});

/** What option and dropdown questions have alike: the property they fill, their options and the rules on them. */
const choices = {
  mappedToPropertyId: z.string().optional(),
  options: z.array(OptionValue).optional(),
  rules: z.array(Rule).optional(),
};

export const SimpleQuestion = z.looseObject({
  ...questionBase,
  category: z.literal("simple"),
  type: z.enum(SIMPLE_TYPES),
  name: z.string(),
  mappedToPropertyId: z.string().optional(),
});
export const OptionQuestion = z.looseObject({
  ...questionBase,
  category: z.literal("option"),
  type: z.enum(OPTION_TYPES),
  randomizeOrder: z.boolean(),
  includeOther: z.boolean(),
  otherDisplayText: z.string().optional(),
  includeNoneOfTheAbove: z.boolean(),
  ...choices,
});
export const DropdownQuestion = z.looseObject({
  ...questionBase,
  category: z.literal("dropdown"),
  type: z.literal("DROPDOWN"),
  ...choices,
});
export const MatrixQuestion = z.looseObject({
  ...questionBase,
  category: z.literal("matrix"),
  type: z.literal("MATRIX"),
  columns: z.array(z.string()).optional(),
  rows: z.array(z.looseObject({ value: z.string(), mappedToPropertyId: z.string().optional() })).optional(),
});
export const Question = z.discriminatedUnion("category", [
  SimpleQuestion,
  OptionQuestion,
  DropdownQuestion,
  MatrixQuestion,
]);
export type Question = z.infer<typeof Question>;

export const Screener = z.looseObject({
  id: Id,
  workspaceId: Id,
  studyId: Id,
  type: z.enum(SCREENER_TYPES),
  showSchedulerToQualified: z.boolean(),
  qualifyByDefault: z.boolean(),
  questions: z.array(Question),
  externalSurveyId: z.string().optional(),
  surveyProviderCollectorId: z.string().optional(),
  externalSurveySetupStatus: z.enum(EXTERNAL_SETUP_STATUSES).optional(),
  externalSurveySetupErrorCode: z.string().optional(),
  externalSurveySetupUpdatedAt: DateTimeString.optional(),
  customLinkUrl: z.string().optional(),
  customLinkTokensJson: z.string().optional(),
  createdAt: DateTimeString,
  updatedAt: DateTimeString,
});
export type Screener = z.infer<typeof Screener>;
