import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OpsServer, startOpsServer } from "../../src/ops/index.ts";
import { AUTH, basic, call, type OpsProject, withOpsProject } from "./ops-fixture.ts";

describe("the ops server under a password guesser", () => {
  let project: OpsProject;
  let ops: OpsServer;

  beforeAll(async () => {
    project = await withOpsProject();
    ops = await startOpsServer({ config: project.config, logger: project.logger, port: 0 });
  });
  afterAll(async () => {
    await ops?.close();
    await project?.cleanup();
  });

  it("answers 429 after five wrong passwords in a row, without checking, until the wait is over", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) {
      statuses.push((await call(`${ops.url}/api/jobs`, { headers: basic("ops", `guess-${i}`) })).status);
    }
    expect(statuses.slice(0, 6)).toEqual([401, 401, 401, 401, 401, 429]);
    // Thirty tries in a row get a handful of checks (one more each time a wait, doubling, is over).
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(8);
    expect(statuses.filter((s) => s !== 401 && s !== 429)).toEqual([]);
    const refused = await call(`${ops.url}/api/jobs`, { headers: AUTH });
    // Even the right password waits: a guesser learns nothing during the wait.
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ error: "ops_too_many_wrong_passwords" });
    const wait = Number(refused.headers.get("retry-after"));
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(wait).toBeLessThanOrEqual(60);
    // The liveness probe is never held back.
    expect((await call(`${ops.url}/healthz`)).status).toBe(200);

    await new Promise((r) => setTimeout(r, wait * 1000 + 100));
    expect((await call(`${ops.url}/api/jobs`, { headers: AUTH })).status).toBe(200);
    // The right password reset the count: one wrong try is a plain 401 again.
    expect((await call(`${ops.url}/api/jobs`, { headers: basic("ops", "again") })).status).toBe(401);
  });
});
