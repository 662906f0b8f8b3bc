import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { NOTHING_ON_DISK, spawnOwnRedis, stopRedisProcess } from "../helpers/redis-process.ts";
import { eventually } from "../queue/runtime-fixture.ts";

const bin = path.resolve("bin/recruit-sync.mjs");

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

describe("an inline import against a Redis at maxmemory", () => {
  let emu: TestEmulator;
  let dir: string;
  let configDir: string;
  let server: ChildProcess | undefined;
  let url: string;
  let admin: Redis;
  beforeAll(async () => {
    emu = await startTestEmulator();
    dir = await mkdtemp(path.join(tmpdir(), "recruit-sync-redis-oom-"));
    configDir = path.join(dir, "config");
    await mkdir(configDir);
    await writeFile(path.join(configDir, "default.yaml"), "paths:\n  dataDir: ./data\n");
    const own = await spawnOwnRedis([...NOTHING_ON_DISK, "--maxmemory-policy", "noeviction"]);
    server = own.child;
    url = own.url;
    admin = new Redis(own.port, "127.0.0.1");
  });
  afterAll(async () => {
    admin?.disconnect();
    if (server) await stopRedisProcess(server, "SIGKILL");
    await emu.close();
    await rm(dir, { recursive: true, force: true });
  });

  const importFile = (file: string, job: string) => {
    const child = spawn(
      process.execPath,
      [bin, "import", file, "--job", job, "--inline", "--rejects", path.join(dir, "r.csv")],
      {
        env: {
          ...process.env,
          NODE_ENV: "",
          RECRUIT_SYNC_CONFIG_DIR: configDir,
          RECRUIT_SYNC_API_TOKEN: emu.token,
          RECRUIT_SYNC_BASE_URL: emu.baseUrl,
          REDIS_URL: url,
        },
      },
    );
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (d) => (stdout += d));
    child.stderr?.on("data", (d) => (stderr += d));
    const ran = new Promise<Ran>((resolve) =>
      child.on("exit", (code) => resolve({ code: code ?? -1, stdout, stderr })),
    );
    return ran;
  };
  const requests = async () => {
    const byStatus = (await emu.requests()).byRoute.importParticipants ?? {};
    return Object.values(byStatus).reduce((a, b) => a + b, 0);
  };

  it("stops with one line naming maxmemory, and its rerun resends no more than the batches in flight", async () => {
    const rows = ["Email,Name"];
    for (let i = 0; i < 1200; i++) rows.push(`oom${i}@example.com,P${i}`);
    const file = path.join(dir, "people.csv");
    await writeFile(file, `${rows.join("\n")}\n`);
    const job = path.join(dir, "job.yaml");
    await writeFile(
      job,
      "kind: import\ntarget: { studyId: study_1 }\ncolumns:\n  - { column: Email, to: email }\n  - { column: Name, to: firstName }\nbatchSize: 30\n",
    );
    // Slow answers: Redis fills up while batches are in flight, so their ledger writes are refused.
    await emu.admin("/faults", { body: { route: "importParticipants", latencyMs: 150 } });
    const failing = importFile(file, job);
    await eventually(async () => ((await requests()) >= 8 ? true : undefined), 30_000, "8 batches sent");
    await admin.config("SET", "maxmemory", "1");
    const failed = await failing;
    await admin.config("SET", "maxmemory", "0");
    expect(failed.code).toBe(1);
    expect(failed.stderr.trim().split("\n")).toHaveLength(1);
    expect(failed.stderr).toMatch(
      /^recruit-sync: Redis at redis:\/\/127\.0\.0\.1:\d+ refused a write: it is at its maxmemory limit\. Give it more memory \(maxmemory\) and keep maxmemory-policy noeviction, or free keys it holds that are not recruit-sync's; a rerun resumes where this one stopped\n$/,
    );

    const rerun = await importFile(file, job);
    expect(rerun.code).toBe(0);
    expect(rerun.stdout).toContain("1,200 rows read → 1,200 imported");
    // 40 batches; imports.concurrency (2) in flight when Redis refused the ledger's writes.
    expect((await requests()) - 40).toBeLessThanOrEqual(2);
  }, 120_000);
});
