import { describe, expect, it } from "vitest";
import {
  DropdownQuestionRequest,
  MatrixQuestionRequest,
  OptionQuestionRequest,
  PropertyGroupQuery,
  QuestionRequest,
  ReplaceScreenerBody,
  SCREENER_LIMITS,
  SimpleQuestionRequest,
  TemplateQuestionRequest,
  UpdateStudyBody,
} from "../../src/api/index.ts";

const opts = (n: number) => Array.from({ length: n }, (_, i) => ({ value: `Option ${i + 1}` }));
const simple = { category: "simple", type: "SHORT_FORM", name: "Your role?" } as const;
const option = (extra: Record<string, unknown> = {}) => ({
  category: "option",
  type: "SINGLE_SELECT",
  name: "Which tools?",
  options: opts(3),
  ...extra,
});
const matrix = (columns: string[], rows: { value: string }[]) => ({
  category: "matrix",
  type: "MATRIX",
  name: "Rate each",
  columns,
  rows,
});

function issuePaths(result: { success: boolean; error?: { issues: { path: PropertyKey[] }[] } }): string[] {
  return (result.error?.issues ?? []).map((i) => i.path.join("."));
}

describe("screener replacement body (spec 4.1, 8)", () => {
  it("accepts 1 and 50 questions and refuses 0 and 51", () => {
    const body = (n: number) => ({ questions: Array.from({ length: n }, () => simple) });
    expect(ReplaceScreenerBody.safeParse(body(1)).success).toBe(true);
    expect(ReplaceScreenerBody.safeParse(body(SCREENER_LIMITS.maxQuestions)).success).toBe(true);
    expect(ReplaceScreenerBody.safeParse(body(0)).success).toBe(false);
    expect(issuePaths(ReplaceScreenerBody.safeParse(body(51)))).toEqual(["questions"]);
  });

  it("requires questions", () => {
    expect(issuePaths(ReplaceScreenerBody.safeParse({}))).toEqual(["questions"]);
  });

  it("resets omitted top-level flags to false", () => {
    const parsed = ReplaceScreenerBody.parse({ questions: [simple] });
    expect(parsed.showSchedulerToQualified).toBe(false);
    expect(parsed.qualifyByDefault).toBe(false);
  });

  it("rejects unknown top-level keys", () => {
    expect(issuePaths(ReplaceScreenerBody.safeParse({ questions: [simple], title: "x" }))).toEqual([""]);
  });
});

describe("question request shapes (spec 2.5)", () => {
  it("rejects an unknown property on every category", () => {
    for (const q of [
      { ...simple, extra: 1 },
      { ...option(), extra: 1 },
      { category: "dropdown", type: "DROPDOWN", name: "Country", options: opts(2), extra: 1 },
      { ...matrix(["a"], [{ value: "r" }]), extra: 1 },
      { category: "template", questionTemplateId: "qt_1", extra: 1 },
    ]) {
      expect(QuestionRequest.safeParse(q).success, JSON.stringify(q)).toBe(false);
    }
  });

  it("rejects an unknown property inside options, rows and rules", () => {
    expect(
      OptionQuestionRequest.safeParse(option({ options: [{ value: "a", colour: "red" }] })).success,
    ).toBe(false);
    expect(
      MatrixQuestionRequest.safeParse(matrix(["a"], [{ value: "r", id: "x" } as { value: string }])).success,
    ).toBe(false);
    const rule = { operator: "IS", optionValues: ["Option 1"], weight: 2 };
    expect(OptionQuestionRequest.safeParse(option({ rules: [rule] })).success).toBe(false);
  });

  it("defaults isRequired to true and the option flags to false", () => {
    const s = SimpleQuestionRequest.parse(simple);
    expect(s.isRequired).toBe(true);
    const o = OptionQuestionRequest.parse(option());
    expect([o.isRequired, o.randomizeOrder, o.includeOther, o.includeNoneOfTheAbove]).toEqual([
      true,
      false,
      false,
      false,
    ]);
    const d = DropdownQuestionRequest.parse({
      category: "dropdown",
      type: "DROPDOWN",
      name: "Country",
      options: opts(1),
    });
    expect(d.isRequired).toBe(true);
  });

  it("lets a template override only name, description and isRequired", () => {
    expect(
      TemplateQuestionRequest.safeParse({
        category: "template",
        questionTemplateId: "qt_1",
        name: "n",
        description: "d",
        isRequired: false,
      }).success,
    ).toBe(true);
    expect(
      TemplateQuestionRequest.safeParse({
        category: "template",
        questionTemplateId: "qt_1",
        type: "SHORT_FORM",
      }).success,
    ).toBe(false);
    expect(TemplateQuestionRequest.safeParse({ category: "template" }).success).toBe(false);
  });

  it("refuses a category of template's type values outside the sets", () => {
    expect(QuestionRequest.safeParse({ ...simple, type: "DROPDOWN" }).success).toBe(false);
    expect(QuestionRequest.safeParse(option({ type: "SHORT_FORM" })).success).toBe(false);
    expect(QuestionRequest.safeParse({ ...simple, category: "essay" }).success).toBe(false);
  });

  it("accepts 1 and 25 options and refuses 0 and 26, for option and dropdown questions", () => {
    for (const make of [
      (n: number) => option({ options: opts(n) }),
      (n: number) => ({ category: "dropdown", type: "DROPDOWN", name: "Country", options: opts(n) }),
    ]) {
      expect(QuestionRequest.safeParse(make(1)).success).toBe(true);
      expect(QuestionRequest.safeParse(make(25)).success).toBe(true);
      expect(issuePaths(QuestionRequest.safeParse(make(0)))).toEqual(["options"]);
      expect(issuePaths(QuestionRequest.safeParse(make(26)))).toEqual(["options"]);
    }
  });

  it("refuses Other and None of the above on a dropdown", () => {
    const d = { category: "dropdown", type: "DROPDOWN", name: "Country", options: opts(2) };
    expect(QuestionRequest.safeParse({ ...d, includeOther: true }).success).toBe(false);
    expect(QuestionRequest.safeParse({ ...d, includeNoneOfTheAbove: true }).success).toBe(false);
  });

  it("accepts otherDisplayText only when includeOther is true", () => {
    expect(
      OptionQuestionRequest.safeParse(option({ includeOther: true, otherDisplayText: "Something else" }))
        .success,
    ).toBe(true);
    expect(
      issuePaths(OptionQuestionRequest.safeParse(option({ otherDisplayText: "Something else" }))),
    ).toEqual(["otherDisplayText"]);
    expect(
      issuePaths(OptionQuestionRequest.safeParse(option({ includeOther: false, otherDisplayText: "x" }))),
    ).toEqual(["otherDisplayText"]);
  });

  it("requires every rule option value to name an option of the question", () => {
    const rules = (values: string[]) => [{ operator: "IS", optionValues: values }];
    expect(OptionQuestionRequest.safeParse(option({ rules: rules(["Option 1", "Option 3"]) })).success).toBe(
      true,
    );
    expect(
      issuePaths(OptionQuestionRequest.safeParse(option({ rules: rules(["Option 1", "Option 9"]) }))),
    ).toEqual(["rules.0.optionValues.1"]);
    const dd = { category: "dropdown", type: "DROPDOWN", name: "Country", options: opts(2) };
    expect(DropdownQuestionRequest.safeParse({ ...dd, rules: rules(["Option 2"]) }).success).toBe(true);
    expect(DropdownQuestionRequest.safeParse({ ...dd, rules: rules(["OTHER"]) }).success).toBe(false);
  });

  it("lets a rule name OTHER or NONE only when those extras are enabled", () => {
    const rules = [{ operator: "IS", optionValues: ["OTHER", "NONE"] }];
    expect(OptionQuestionRequest.safeParse(option({ rules })).success).toBe(false);
    expect(OptionQuestionRequest.safeParse(option({ rules, includeOther: true })).success).toBe(false);
    expect(
      OptionQuestionRequest.safeParse(option({ rules, includeOther: true, includeNoneOfTheAbove: true }))
        .success,
    ).toBe(true);
    expect(
      issuePaths(OptionQuestionRequest.safeParse(option({ rules, includeNoneOfTheAbove: true }))),
    ).toEqual(["rules.0.optionValues.0"]);
  });

  it("requires rule operator and optionValues", () => {
    expect(OptionQuestionRequest.safeParse(option({ rules: [{ optionValues: ["Option 1"] }] })).success).toBe(
      false,
    );
    expect(OptionQuestionRequest.safeParse(option({ rules: [{ operator: "IS" }] })).success).toBe(false);
  });

  it("bounds matrix columns: 1 to 25, each at most 40 characters", () => {
    const row = [{ value: "Row" }];
    const cols = (n: number, len = 5) => Array.from({ length: n }, (_, i) => `${i}`.padEnd(len, "c"));
    expect(MatrixQuestionRequest.safeParse(matrix(cols(1), row)).success).toBe(true);
    expect(MatrixQuestionRequest.safeParse(matrix(cols(25), row)).success).toBe(true);
    expect(issuePaths(MatrixQuestionRequest.safeParse(matrix(cols(0), row)))).toEqual(["columns"]);
    expect(issuePaths(MatrixQuestionRequest.safeParse(matrix(cols(26), row)))).toEqual(["columns"]);
    expect(MatrixQuestionRequest.safeParse(matrix(["x".repeat(40)], row)).success).toBe(true);
    expect(issuePaths(MatrixQuestionRequest.safeParse(matrix(["x".repeat(41)], row)))).toEqual(["columns.0"]);
  });

  it("bounds matrix rows: 1 to 25, labels at most 100 characters", () => {
    const rows = (n: number, len = 3) => Array.from({ length: n }, () => ({ value: "r".repeat(len) }));
    expect(MatrixQuestionRequest.safeParse(matrix(["a"], rows(1))).success).toBe(true);
    expect(MatrixQuestionRequest.safeParse(matrix(["a"], rows(25))).success).toBe(true);
    expect(issuePaths(MatrixQuestionRequest.safeParse(matrix(["a"], rows(0))))).toEqual(["rows"]);
    expect(issuePaths(MatrixQuestionRequest.safeParse(matrix(["a"], rows(26))))).toEqual(["rows"]);
    expect(MatrixQuestionRequest.safeParse(matrix(["a"], rows(1, 100))).success).toBe(true);
    expect(issuePaths(MatrixQuestionRequest.safeParse(matrix(["a"], rows(1, 101))))).toEqual([
      "rows.0.value",
    ]);
  });
});

describe("property-group page size (spec 4.9, 8)", () => {
  it("accepts 1 and 100 and refuses 0 and 101", () => {
    expect(PropertyGroupQuery.safeParse({ pageSize: "100" }).success).toBe(true);
    expect(PropertyGroupQuery.safeParse({ pageSize: "1" }).success).toBe(true);
    expect(PropertyGroupQuery.safeParse({ pageSize: "101" }).success).toBe(false);
    expect(PropertyGroupQuery.safeParse({ pageSize: "0" }).success).toBe(false);
  });
});

describe("study update body (spec 4.3)", () => {
  it("accepts the accepted fields and refuses the returned-only ones", () => {
    expect(UpdateStudyBody.safeParse({ studyPlan: { name: "n", incentive: { amount: 50 } } }).success).toBe(
      true,
    );
    expect(UpdateStudyBody.safeParse({ studyPlan: { incentive: { currency: "USD" } } }).success).toBe(false);
    expect(
      UpdateStudyBody.safeParse({ studyPlan: { incentive: { incentiveType: "MONEY_OR_GIFT_CARD" } } })
        .success,
    ).toBe(false);
    expect(
      UpdateStudyBody.safeParse({ studyPlan: { scheduler: { interviewDurationMinutes: 30 } } }).success,
    ).toBe(false);
    expect(UpdateStudyBody.safeParse({ studyPlan: { startDate: "2026-02-30" } }).success).toBe(false);
  });
});
