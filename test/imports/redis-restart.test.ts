import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { respawnRedisOn, spawnOwnRedis, stopRedisProcess } from "../helpers/redis-process.ts";
import { eventually } from "../queue/runtime-fixture.ts";

const bin = path.resolve("bin/recruit-sync.mjs");

/** A redis-server of the test's own, persisting to its folder with AOF, as production Redis must. */
const redisArgs = (dir: string) => ["--dir", dir, "--appendonly", "yes", "--save", ""];

/**
 * A configuration folder of the suite's own: its default.yaml puts paths.dataDir (spills, rejects)
 * in the suite's folder, not the repository's ./data. The configuration has no environment
 * variable for the data folder; it reads the folder's files.
 */
async function suiteConfig(dir: string): Promise<string> {
  const configDir = path.join(dir, "config");
  await mkdir(configDir, { recursive: true });
  await writeFile(
    path.join(configDir, "default.yaml"),
    `paths:\n  dataDir: ${JSON.stringify(path.join(dir, "data"))}\n`,
  );
  return configDir;
}

describe("inline imports and Redis: restarts and run locks", () => {
  let emu: TestEmulator;
  let dir: string;
  let port: number;
  let redis: ChildProcess | undefined;
  let configDir: string;
  beforeAll(async () => {
    emu = await startTestEmulator();
    dir = await mkdtemp(path.join(tmpdir(), "recruit-sync-redis-restart-"));
    configDir = await suiteConfig(dir);
    ({ port, child: redis } = await spawnOwnRedis(redisArgs(dir)));
  });
  afterAll(async () => {
    if (redis) await stopRedisProcess(redis, "SIGKILL");
    await emu.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("reconnects, keeps its ledger, and sends every batch once", async () => {
    const rows = ["Email,Name"];
    for (let i = 0; i < 1200; i++) rows.push(`restart${i}@example.com,P${i}`);
    const file = path.join(dir, "people.csv");
    await writeFile(file, `${rows.join("\n")}\n`);
    const job = path.join(dir, "job.yaml");
    await writeFile(
      job,
      "kind: import\ntarget: { studyId: study_1 }\ncolumns:\n  - { column: Email, to: email }\n  - { column: Name, to: firstName }\nbatchSize: 30\n",
    );
    await emu.admin("/faults", { body: { route: "importParticipants", latencyMs: 60 } });
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
          REDIS_URL: `redis://127.0.0.1:${port}`,
        },
      },
    );
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (d) => (stdout += d));
    child.stderr?.on("data", (d) => (stderr += d));
    const exited = new Promise<number>((resolve) => child.on("exit", (code) => resolve(code ?? -1)));

    const sent = async () => (await emu.requests()).byRoute.importParticipants?.["200"] ?? 0;
    await eventually(async () => ((await sent()) >= 8 ? true : undefined), 20_000, "8 batches sent");
    // Restart Redis under the running import: SIGTERM flushes its AOF, which keeps the ledger. The
    // exit is awaited from before the signal, so a server that is gone at once is still seen to go.
    if (redis) await stopRedisProcess(redis, "SIGTERM");
    await new Promise((r) => setTimeout(r, 1500));
    redis = await respawnRedisOn(port, redisArgs(dir));

    const code = await exited;
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(stdout).toContain("1,200 rows read → 1,200 imported");
    expect(await sent()).toBe(40);
    // The run's spill folder was made under the suite's data folder (and removed after), not ./data.
    expect(await readdir(path.join(dir, "data"))).toContain("spill");
  }, 60_000);

  it("lets one of two concurrent runs of one file go on: the other stops with one line naming the holder", async () => {
    const rows = ["Email,Name"];
    for (let i = 0; i < 900; i++) rows.push(`twice${i}@example.com,P${i}`);
    const file = path.join(dir, "twice.csv");
    await writeFile(file, `${rows.join("\n")}\n`);
    const job = path.join(dir, "job.yaml");
    const before = (await emu.requests()).byRoute.importParticipants?.["200"] ?? 0;
    const runOnce = () =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        const child = spawn(
          process.execPath,
          [bin, "import", file, "--job", job, "--inline", "--rejects", path.join(dir, "t.csv")],
          {
            env: {
              ...process.env,
              NODE_ENV: "",
              RECRUIT_SYNC_CONFIG_DIR: configDir,
              RECRUIT_SYNC_API_TOKEN: emu.token,
              RECRUIT_SYNC_BASE_URL: emu.baseUrl,
              REDIS_URL: `redis://127.0.0.1:${port}`,
            },
          },
        );
        let stdout = "";
        let stderr = "";
        child.stdout?.on("data", (d) => (stdout += d));
        child.stderr?.on("data", (d) => (stderr += d));
        child.on("exit", (code) => resolve({ code: code ?? -1, stdout, stderr }));
      });
    const [a, b] = await Promise.all([runOnce(), runOnce()]);
    const results = [a, b].sort((x, y) => x.code - y.code);
    expect(results.map((r) => r.code)).toEqual([0, 1]);
    expect(results[1]?.stderr.trim().split("\n")).toHaveLength(1);
    expect(results[1]?.stderr).toMatch(/is already running \(recruit-sync import --inline on .* pid \d+\)/);
    const after = (await emu.requests()).byRoute.importParticipants?.["200"] ?? 0;
    expect(after - before).toBe(30);
  }, 60_000);
});
