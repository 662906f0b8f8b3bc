import { afterEach, describe, expect, it } from "vitest";
import { ApiError, type Question } from "../../src/api/index.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { raw } from "./raw-http.ts";

let emu: TestEmulator | undefined;
afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

const simple = { category: "simple", type: "SHORT_FORM", name: "Your role?" } as const;

async function failure(p: Promise<unknown>): Promise<ApiError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof ApiError)) throw new Error(`expected an ApiError, got ${String(err)}`);
  return err;
}

describe("GET /studies/{studyId}/screener", () => {
  it("returns a draft study's native screener with every question", async () => {
    emu = await startTestEmulator();
    const s = await emu.client.getScreener("study_1");
    expect(s).toMatchObject({ studyId: "study_1", type: "NATIVE", workspaceId: "workspace_1" });
    expect(s.questions.map((q) => q.category)).toEqual(["simple", "option", "option"]);
    for (const q of s.questions) {
      expect(q.id).toEqual(expect.any(String));
      expect(q.workspaceId).toBe("workspace_1");
      expect(typeof q.isRequired).toBe("boolean");
    }
    // The template-created question comes back in its concrete category with its template id.
    expect(s.questions[2]).toMatchObject({ category: "option", questionTemplateId: "question_template_1" });
    expect(s.questions.some((q) => (q.category as string) === "template")).toBe(false);
  });

  it("answers 409 text 'Study is not in draft status' for every status but DRAFT", async () => {
    emu = await startTestEmulator();
    for (const studyId of ["study_5", "study_6", "study_7", "study_9"]) {
      const res = await raw(emu, "GET", `/studies/${studyId}/screener`);
      expect(res.status).toBe(409);
      expect(res.text).toBe("Study is not in draft status");
      expect(res.contentType).toMatch(/^text\/plain/);
    }
  });

  it("refuses survey studies and non-native screeners with a plain-text 400", async () => {
    emu = await startTestEmulator();
    for (const studyId of ["study_4", "study_11", "study_3", "study_10"]) {
      const res = await raw(emu, "GET", `/studies/${studyId}/screener`);
      expect(res.status).toBe(400);
      expect(res.text).toBe("Bad Request");
      expect(res.contentType).toMatch(/^text\/plain/);
    }
  });

  it("answers 404 Study not found and Screener not found", async () => {
    emu = await startTestEmulator();
    const missing = await raw(emu, "GET", "/studies/study_999/screener");
    expect([missing.status, missing.text]).toEqual([404, "Study not found"]);
    const none = await raw(emu, "GET", "/studies/study_2/screener");
    expect([none.status, none.text]).toEqual([404, "Screener not found"]);
  });

  it("needs read_screeners", async () => {
    emu = await startTestEmulator({ tokens: ["blind:view_emails"] });
    const res = await raw(emu, "GET", "/studies/study_1/screener", { token: "blind" });
    expect([res.status, res.text]).toEqual([403, "Forbidden"]);
  });
});

describe("PUT /studies/{studyId}/screener", () => {
  it("replaces the whole screener, regenerates question ids and resets omitted fields", async () => {
    emu = await startTestEmulator();
    const before = await emu.client.getScreener("study_1");
    expect(before.qualifyByDefault).toBe(true);
    const first = await emu.client.replaceScreener("study_1", {
      showSchedulerToQualified: true,
      questions: [
        simple,
        { category: "dropdown", type: "DROPDOWN", name: "Country", options: [{ value: "A" }] },
      ],
    });
    expect(first.id).toBe(before.id);
    expect(first.showSchedulerToQualified).toBe(true);
    expect(first.qualifyByDefault).toBe(false);
    expect(first.questions.map((q) => q.name)).toEqual(["Your role?", "Country"]);
    expect(first.questions[0]).toMatchObject({ category: "simple", type: "SHORT_FORM", isRequired: true });
    const second = await emu.client.replaceScreener("study_1", { questions: [simple] });
    expect(second.showSchedulerToQualified).toBe(false);
    expect(second.questions).toHaveLength(1);
    const ids = new Set([...before.questions, ...first.questions].map((q) => q.id));
    expect(ids.has(second.questions[0]?.id ?? "")).toBe(false);
    expect((await emu.client.getScreener("study_1")).questions).toEqual(second.questions);
  });

  it("creates a missing screener and enables the study's includeScreener", async () => {
    emu = await startTestEmulator();
    const study = await emu.client.updateStudy("study_2", { studyPlan: {} });
    expect(study.studyPlan.includeScreener).toBe(false);
    expect(study.screener).toBeNull();
    const s = await emu.client.replaceScreener("study_2", { questions: [simple] });
    expect(s).toMatchObject({
      studyId: "study_2",
      type: "NATIVE",
      showSchedulerToQualified: false,
      qualifyByDefault: false,
    });
    expect(s.createdAt).toEqual(expect.any(String));
    const after = await emu.client.updateStudy("study_2", { studyPlan: {} });
    expect(after.studyPlan.includeScreener).toBe(true);
    expect(after.screener?.id).toBe(s.id);
  });

  it("expands template questions with only name, description and isRequired overridden", async () => {
    emu = await startTestEmulator();
    const s = await emu.client.replaceScreener("study_2", {
      questions: [
        {
          category: "template",
          questionTemplateId: "question_template_4",
          name: "Rate us",
          isRequired: false,
        },
        { category: "template", questionTemplateId: "question_template_3", description: "Where you live" },
      ],
    });
    const [matrix, dropdown] = s.questions as [Question, Question];
    expect(matrix).toMatchObject({
      category: "matrix",
      type: "MATRIX",
      name: "Rate us",
      isRequired: false,
      questionTemplateId: "question_template_4",
      columns: ["Poor", "Fair", "Good", "Excellent"],
    });
    expect(dropdown).toMatchObject({
      category: "dropdown",
      type: "DROPDOWN",
      name: "Which country do you live in?",
      description: "Where you live",
      questionTemplateId: "question_template_3",
    });
  });

  it("answers 409 outside DRAFT and 400 for survey studies and non-native screeners", async () => {
    emu = await startTestEmulator();
    const body = { questions: [simple] };
    expect((await raw(emu, "PUT", "/studies/study_5/screener", { body })).text).toBe(
      "Study is not in draft status",
    );
    expect((await raw(emu, "PUT", "/studies/study_4/screener", { body })).status).toBe(400);
    expect((await raw(emu, "PUT", "/studies/study_3/screener", { body })).status).toBe(400);
    expect((await raw(emu, "PUT", "/studies/nope/screener", { body })).text).toBe("Study not found");
    // Nothing changed on the refused studies.
    const snap = await emu.snapshot();
    expect(snap.studies.find((s) => s.studyId === "study_4")?.screener).toBeNull();
  });

  it("answers 400 JSON for schema failures: no questions, too many, unknown keys, bad matrix", async () => {
    emu = await startTestEmulator();
    const cases: [unknown, (string | number)[]][] = [
      [{}, ["questions"]],
      [{ questions: [] }, ["questions"]],
      [{ questions: Array.from({ length: 51 }, () => simple) }, ["questions"]],
      [{ questions: [simple], extra: true }, []],
      [{ questions: [{ ...simple, colour: "red" }] }, ["questions", 0]],
      [
        {
          questions: [
            {
              category: "matrix",
              type: "MATRIX",
              name: "M",
              columns: ["x".repeat(41)],
              rows: [{ value: "r" }],
            },
          ],
        },
        ["questions", 0, "columns", 0],
      ],
      [
        { questions: [{ category: "option", type: "SINGLE_SELECT", name: "O", options: [] }] },
        ["questions", 0, "options"],
      ],
      [
        {
          questions: [
            {
              category: "option",
              type: "SINGLE_SELECT",
              name: "O",
              options: [{ value: "a" }],
              otherDisplayText: "x",
            },
          ],
        },
        ["questions", 0, "otherDisplayText"],
      ],
    ];
    for (const [body, path] of cases) {
      const res = await raw(emu, "PUT", "/studies/study_1/screener", { body });
      expect(res.status).toBe(400);
      expect(res.contentType).toMatch(/^application\/json/);
      const { errors } = res.json<{ errors: { message: string; path: (string | number)[] }[] }>();
      expect(errors.length).toBeGreaterThan(0);
      expect(errors.map((e) => e.path)).toContainEqual(path);
      for (const e of errors) expect(typeof e.message).toBe("string");
    }
  });

  it("answers 400 JSON at the question's questionTemplateId for an unknown template", async () => {
    emu = await startTestEmulator();
    const res = await raw(emu, "PUT", "/studies/study_1/screener", {
      body: { questions: [simple, { category: "template", questionTemplateId: "question_template_99" }] },
    });
    expect(res.status).toBe(400);
    expect(res.json()).toEqual({
      errors: [{ message: expect.any(String), path: ["questions", 1, "questionTemplateId"] }],
    });
  });
});

describe("POST /studies/{studyId}/screener/questions", () => {
  it("appends the question at the end and returns it in its concrete category", async () => {
    emu = await startTestEmulator();
    const before = await emu.client.getScreener("study_1");
    const q = await emu.client.createScreenerQuestion("study_1", {
      category: "option",
      type: "MULTI_SELECT",
      name: "Pets?",
      options: [{ value: "Cat" }, { value: "Dog" }],
      includeOther: true,
      rules: [{ operator: "IS", optionValues: ["Cat", "OTHER"] }],
    });
    expect(q).toMatchObject({
      category: "option",
      type: "MULTI_SELECT",
      randomizeOrder: false,
      includeOther: true,
      includeNoneOfTheAbove: false,
      isRequired: true,
    });
    const after = await emu.client.getScreener("study_1");
    expect(after.questions).toHaveLength(before.questions.length + 1);
    expect(after.questions.at(-1)?.id).toBe(q.id);
    const t = await emu.client.createScreenerQuestion("study_1", {
      category: "template",
      questionTemplateId: "question_template_2",
    });
    expect(t).toMatchObject({
      category: "simple",
      type: "NUMBER",
      questionTemplateId: "question_template_2",
    });
  });

  it("answers 409 text outside DRAFT, 404 for an unknown study and 400 JSON for a bad question", async () => {
    emu = await startTestEmulator();
    const conflict = await failure(emu.client.createScreenerQuestion("study_6", simple));
    expect([conflict.status, conflict.body]).toEqual([409, "Study is not in draft status"]);
    const missing = await raw(emu, "POST", "/studies/nope/screener/questions", { body: simple });
    expect([missing.status, missing.text]).toEqual([404, "Study not found"]);
    const bad = await raw(emu, "POST", "/studies/study_1/screener/questions", {
      body: {
        category: "option",
        type: "SINGLE_SELECT",
        name: "x",
        options: [{ value: "a" }],
        rules: [{ operator: "IS", optionValues: ["b"] }],
      },
    });
    expect(bad.status).toBe(400);
    expect(bad.json<{ errors: { path: unknown[] }[] }>().errors[0]?.path).toEqual([
      "rules",
      0,
      "optionValues",
      0,
    ]);
    const template = await raw(emu, "POST", "/studies/study_1/screener/questions", {
      body: { category: "template", questionTemplateId: "question_template_1", options: [] },
    });
    expect(template.status).toBe(400);
  });

  it("refuses survey studies and non-native screeners", async () => {
    emu = await startTestEmulator();
    expect((await raw(emu, "POST", "/studies/study_4/screener/questions", { body: simple })).status).toBe(
      400,
    );
    expect((await raw(emu, "POST", "/studies/study_10/screener/questions", { body: simple })).status).toBe(
      400,
    );
  });
});
