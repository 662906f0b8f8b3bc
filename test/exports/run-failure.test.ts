import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "../../src/api/index.ts";
import { RecruitSyncError } from "../../src/errors/index.ts";
import { RunReport, runExport } from "../../src/exports/index.ts";
import { definition, type ExportFixture, exportFixture } from "./export-fixture.ts";

/** Four resources: a failure that stops the run shows in how many of them were tried. */
function all() {
  return definition({
    resources: ["participants", "email_messages", "segments", "person_properties"],
    studies: ["study_1"],
    propertyGroups: ["property_group_1"],
  });
}

describe("an export that fails", () => {
  let fx: ExportFixture;
  beforeAll(async () => {
    fx = await exportFixture("duckdb");
  });
  afterAll(async () => {
    await fx.cleanup();
  });

  it("stops at the first 401 with one line naming the token, without trying the other resources", async () => {
    const client = fx.emu.clientFor({ token: "wrong-token" });
    const before = await fx.emu.requests();
    const err = await runExport({
      definition: all(),
      client,
      sink: fx.sink,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RecruitSyncError);
    const failure = err as RecruitSyncError;
    expect(failure.code).toBe("unauthorized");
    expect(failure.retryable).toBe(false);
    expect(failure.message).toContain("RECRUIT_SYNC_API_TOKEN");
    expect(failure.message).not.toContain("\n");
    const report = RunReport.parse(failure.report);
    expect(Object.keys(report.resources)).toEqual(["participants"]);
    const after = await fx.emu.requests();
    expect(after.total - before.total).toBe(1);
  });

  it("stops at once when the service cannot be reached, and says which address to check", async () => {
    const client = createClient({
      baseUrl: "http://127.0.0.1:9/api/public/v1",
      token: "t",
      retry: { maxAttempts: 1 },
    });
    const err = (await runExport({
      definition: all(),
      client,
      sink: fx.sink,
    }).catch((e: unknown) => e)) as RecruitSyncError;
    expect(err.code).toBe("network_error");
    expect(err.retryable).toBe(true);
    expect(err.message).toContain("http://127.0.0.1:9/api/public/v1");
    expect(Object.keys(RunReport.parse(err.report).resources)).toHaveLength(1);
  });

  it("keeps a resource failure's code and retryability, and still runs the others", async () => {
    const err = (await runExport({
      definition: definition({ resources: ["participants", "segments"], studies: ["study_gone"] }),
      client: fx.emu.client,
      sink: fx.sink,
    }).catch((e: unknown) => e)) as RecruitSyncError;
    expect(err.code).toBe("not_found");
    expect(err.retryable).toBe(false);
    const report = RunReport.parse(err.report);
    expect(report.resources.participants).toMatchObject({
      status: "failed",
      errorCode: "not_found",
      retryable: false,
    });
    expect(report.resources.segments?.status).toBe("succeeded");
  });
});
