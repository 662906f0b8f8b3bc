import { afterEach, describe, expect, it } from "vitest";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { raw } from "./raw-http.ts";

let emu: TestEmulator | undefined;
afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

describe("PATCH /studies/{studyId}", () => {
  it("updates only the provided fields and returns the whole study", async () => {
    emu = await startTestEmulator();
    const before = await emu.client.updateStudy("study_5", { studyPlan: {} });
    const after = await emu.client.updateStudy("study_5", {
      studyPlan: { name: "Renamed", participationLimit: 99, incentive: { amount: 80 } },
    });
    expect(after.studyPlan.name).toBe("Renamed");
    expect(after.studyPlan.participationLimit).toBe(99);
    expect(after.studyPlan.incentive).toEqual({ ...before.studyPlan.incentive, amount: 80 });
    expect({
      ...after.studyPlan,
      name: before.studyPlan.name,
      participationLimit: before.studyPlan.participationLimit,
      incentive: before.studyPlan.incentive,
    }).toEqual(before.studyPlan);
    expect(after).toMatchObject({
      studyId: "study_5",
      studyType: "INTERVIEWS",
      status: "ACTIVE",
      recruitmentStrategy: "IN_SERVICE",
      createdAt: before.createdAt,
    });
    expect(after.owners[0]).toEqual({
      userId: expect.any(String),
      emailAccountId: expect.any(String),
      fullname: expect.any(String),
      email: expect.any(String),
    });
    expect(after.studyPlan.incentive?.currency).toBe("USD");
    expect(after.studyPlan.scheduler?.interviewDurationMinutes).toBe(30);
  });

  it("refuses the returned-only fields incentiveType, currency and scheduler with 400 JSON", async () => {
    emu = await startTestEmulator();
    for (const studyPlan of [
      { incentive: { incentiveType: "MONEY_OR_GIFT_CARD" } },
      { incentive: { currency: "EUR" } },
      { scheduler: { interviewDurationMinutes: 45 } },
    ]) {
      const res = await raw(emu, "PATCH", "/studies/study_1", { body: { studyPlan } });
      expect(res.status).toBe(400);
      expect(res.contentType).toMatch(/^application\/json/);
      expect(res.json<{ errors: unknown[] }>().errors.length).toBeGreaterThan(0);
    }
    const bad = await raw(emu, "PATCH", "/studies/study_1", {
      body: { studyPlan: { startDate: "2026-02-30" } },
    });
    expect(bad.json<{ errors: { path: unknown[] }[] }>().errors[0]?.path).toEqual(["studyPlan", "startDate"]);
  });

  it("answers 404 Study not found", async () => {
    emu = await startTestEmulator();
    const res = await raw(emu, "PATCH", "/studies/study_404", { body: { studyPlan: { name: "x" } } });
    expect([res.status, res.text]).toEqual([404, "Study not found"]);
  });
});
