import { copyFile, mkdir } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { OpsServer } from "../../src/ops/index.ts";
import { followJob, type RunningWorker } from "../../src/queue/index.ts";
import type { TestEmulator } from "../helpers/emulator.ts";
import { AUTH, call, type OpsProject, type OpsStack, SAMPLES, startOpsStack } from "./ops-fixture.ts";

const METRIC = "recruit_sync_import_count_mismatches_total";

describe("the count mismatch metric", () => {
  let emu: TestEmulator;
  let project: OpsProject;
  let worker: RunningWorker;
  let ops: OpsServer;

  const mismatches = async (job: string): Promise<number> => {
    const res = await call(`${ops.url}/metrics`, { headers: AUTH });
    expect(res.status).toBe(200);
    const line = res.text.split("\n").find((l) => l.startsWith(`${METRIC}{job="${job}"}`));
    return line === undefined ? 0 : Number(line.split(" ").at(-1));
  };

  let stack: OpsStack;
  beforeAll(async () => {
    stack = await startOpsStack();
    ({ emu, project, worker, ops } = stack);
    await ops.metricsReady;
  });
  afterAll(async () => {
    await stack?.close();
  });

  it("moves by one for an import whose answer counted one person short", async () => {
    expect(await mismatches("hubspot-contacts")).toBe(0);
    await emu.admin("/faults", { body: { route: "importParticipants", countOffset: -1, count: 1 } });
    await mkdir(project.incoming, { recursive: true });
    const file = path.join(project.incoming, "hubspot-contacts.csv");
    await copyFile(path.join(SAMPLES, "hubspot-contacts.csv"), file);
    const res = await call(`${ops.url}/api/jobs/hubspot-contacts/run`, { headers: AUTH, body: { file } });
    expect(res.status, res.text).toBe(202);
    const { jobId } = res.body as { jobId: string };
    const end = await followJob(worker.queues.imports, jobId, () => {});
    expect(end.state, end.failedReason).toBe("completed");
    const report = end.returnvalue as { countMismatches: { importId: string }[]; warnings: string[] };
    expect(report.countMismatches).toHaveLength(1);
    const importId = report.countMismatches[0]?.importId as string;
    expect(report.warnings.some((w) => w.includes(`(import ${importId})`))).toBe(true);
    await vi.waitFor(async () => expect(await mismatches("hubspot-contacts")).toBe(1), { timeout: 10_000 });
  }, 60_000);
});
