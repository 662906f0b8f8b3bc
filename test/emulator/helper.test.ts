import { afterEach, describe, expect, it } from "vitest";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";

describe("startTestEmulator", () => {
  let emu: TestEmulator | undefined;
  afterEach(async () => {
    await emu?.close();
    emu = undefined;
  });

  it("serves the service on a free port with a typed client, a snapshot and request counts", async () => {
    emu = await startTestEmulator({ sizes: { people: 40 } });
    expect(emu.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/public\/v1$/);
    const page = await emu.client.searchParticipants("study_1", { size: 5 });
    expect(page.results).toHaveLength(5);
    const snap = await emu.snapshot();
    expect(snap.people).toHaveLength(40);
    const counts = await emu.requests();
    expect(counts.byRoute.searchParticipants).toEqual({ "200": 1 });
  });

  it("serves the OpenAPI document at /openapi.json", async () => {
    emu = await startTestEmulator();
    const res = await fetch(`${emu.origin}/openapi.json`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { openapi: string; paths: Record<string, unknown> };
    expect(doc.openapi).toBe("3.1.0");
    expect(Object.keys(doc.paths)).toContain("/studies/{studyId}/screener");
  });
});
