import { type ChildProcess, spawnSync } from "node:child_process";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { type OpsServer, startOpsServer } from "../../src/ops/index.ts";
import { freePort, NOTHING_ON_DISK, respawnRedisOn, spawnOwnRedis } from "../helpers/redis-process.ts";
import { AUTH, call, type OpsProject, withOpsProject } from "./ops-fixture.ts";

type Ready = { status: string; down?: string[]; checks: { name: string; ok: boolean; detail: string }[] };

describe("/readyz", () => {
  describe("when Redis stops", () => {
    let port: number;
    let redisServer: ChildProcess | undefined;
    let project: OpsProject;
    let ops: OpsServer;

    beforeAll(async () => {
      ({ port, child: redisServer } = await spawnOwnRedis(NOTHING_ON_DISK));
      project = await withOpsProject({ redisUrl: `redis://127.0.0.1:${port}` });
      ops = await startOpsServer({ config: project.config, logger: project.logger });
    });
    afterAll(async () => {
      await ops?.close();
      await project?.cleanup().catch(() => {});
      redisServer?.kill("SIGKILL");
    });

    it("answers 200 while Redis and the warehouse can be reached", async () => {
      const res = await call(`${ops.url}/readyz`, { headers: AUTH });
      expect(res.status).toBe(200);
      const body = res.body as Ready;
      // This redis-server keeps nothing on disk: reported, not failing.
      expect(body.status).toBe("degraded");
      expect(body.checks.map((c) => [c.name, c.ok])).toEqual([
        ["redis", true],
        ["redis-persistence", true],
        ["redis-eviction", true],
        ["warehouse", true],
        ["job-definitions", true],
      ]);
    });

    it("turns 503 naming Redis once it stops, and 200 again once it is back", async () => {
      const exited = new Promise((resolve) => redisServer?.once("exit", resolve));
      // redis-cli rather than a client of ours: ioredis would resend SHUTDOWN after the connection drops.
      spawnSync("redis-cli", ["-p", String(port), "SHUTDOWN", "NOSAVE"], { stdio: "ignore" });
      await exited;
      redisServer = undefined;

      await vi.waitFor(
        async () => {
          const res = await call(`${ops.url}/readyz`, { headers: AUTH });
          expect(res.status).toBe(503);
          const body = res.body as Ready;
          expect(body.status).toBe("unavailable");
          expect(body.down).toEqual([expect.stringMatching(/^redis: /)]);
          expect(body.checks.filter((c) => c.name.startsWith("redis-")).map((c) => c.detail)).toEqual([
            "not checked: Redis does not answer",
            "not checked: Redis does not answer",
          ]);
        },
        { timeout: 10_000, interval: 200 },
      );
      // The routes that need Redis answer at once, instead of waiting on a reconnecting connection.
      const runs = await call(`${ops.url}/api/runs`, { headers: AUTH });
      expect(runs.status).toBe(503);
      expect((runs.body as { error: string }).error).toBe("ops_redis_down");
      expect((await call(`${ops.url}/metrics`, { headers: AUTH })).status).toBe(503);
      expect((await call(`${ops.url}/healthz`)).status).toBe(200);

      redisServer = await respawnRedisOn(port, NOTHING_ON_DISK);
      await vi.waitFor(
        async () => {
          const res = await call(`${ops.url}/readyz`, { headers: AUTH });
          expect(res.status).toBe(200);
        },
        { timeout: 15_000, interval: 250 },
      );
    });
  });

  describe("when the warehouse cannot be reached", () => {
    let project: OpsProject | undefined;
    let ops: OpsServer | undefined;
    afterEach(async () => {
      await ops?.close();
      await project?.cleanup();
      ops = undefined;
      project = undefined;
    });

    it("answers 503 naming a PostgreSQL warehouse that refuses connections", async () => {
      const closed = await freePort();
      project = await withOpsProject({
        warehouse: `postgres://recruit:s3cret@127.0.0.1:${closed}/analytics`,
      });
      ops = await startOpsServer({ config: project.config, logger: project.logger });
      const res = await call(`${ops.url}/readyz`, { headers: AUTH });
      expect(res.status).toBe(503);
      const body = res.body as Ready;
      expect(body.down).toEqual([expect.stringMatching(/^warehouse: /)]);
      expect(res.text).not.toContain("s3cret");
    });

    it("answers 503 naming a DuckDB warehouse whose folder is a file", async () => {
      project = await withOpsProject();
      const file = path.join(project.dir, "not-a-folder");
      await writeFile(file, "");
      project.config.warehouse.url = `duckdb:${file}/warehouse.duckdb`;
      ops = await startOpsServer({ config: project.config, logger: project.logger });
      const res = await call(`${ops.url}/readyz`, { headers: AUTH });
      expect(res.status).toBe(503);
      expect((res.body as Ready).down).toEqual([`warehouse: ${file} is not a folder`]);
    });

    it("answers 200 for a reachable PostgreSQL warehouse", async () => {
      const { DATABASE_URL } = await import("../helpers/env.ts");
      project = await withOpsProject({ warehouse: DATABASE_URL });
      ops = await startOpsServer({ config: project.config, logger: project.logger });
      const res = await call(`${ops.url}/readyz`, { headers: AUTH });
      expect(res.status, res.text).toBe(200);
    });
  });
});
