import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ImportReport } from "../../src/imports/index.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { REDIS_URL } from "../helpers/env.ts";
import { type TestRedis, withTestRedis } from "../helpers/redis.ts";
import { type Scratch, scratch } from "./fixtures.ts";
import { ROOT } from "./helpers.ts";

const PEOPLE = 60;
const BATCH = 5;
const BATCHES = PEOPLE / BATCH;
const IN_FLIGHT = 3;

let emu: TestEmulator;
let redis: TestRedis;
let s: Scratch;
beforeEach(async () => {
  // A quota slow enough that the run is still sending when it is killed.
  emu = await startTestEmulator({ rateLimit: "6/1s" });
  redis = await withTestRedis();
  s = await scratch();
  await mkdir(path.join(s.dir, "config"));
  await writeFile(
    path.join(s.dir, "config/default.yaml"),
    `service: { baseUrl: ${emu.baseUrl} }\nredis: { url: ${REDIS_URL}, prefix: ${redis.prefix} }\nwarehouse: { url: "file:./data" }\npaths: { jobsDir: ./jobs, dataDir: ./data }\nimports: { concurrency: ${IN_FLIGHT} }\n`,
  );
  await writeFile(
    path.join(s.dir, "people.yaml"),
    `kind: import\ntarget: { studyId: study_4 }\ncolumns:\n  - { column: Email, to: email }\n  - { column: Name, to: firstName }\nbatchSize: ${BATCH}\n`,
  );
  const lines = ["Email,Name"];
  for (let i = 1; i <= PEOPLE; i++) lines.push(`inflight${i}@example.net,Person ${i}`);
  await writeFile(path.join(s.dir, "people.csv"), `${lines.join("\n")}\n`);
});
afterEach(async () => {
  await emu.close();
  await redis.cleanup();
  await s.cleanup();
});

/** `recruit-sync import people.csv --job people.yaml --inline`, a child process of the real bin. */
function cli(): ChildProcess {
  return spawn(
    process.execPath,
    [
      path.join(ROOT, "bin/recruit-sync.mjs"),
      "import",
      "people.csv",
      "--job",
      "people.yaml",
      "--inline",
      "--report",
      "report.json",
    ],
    {
      cwd: s.dir,
      env: {
        ...process.env,
        NODE_ENV: "",
        RECRUIT_SYNC_BASE_URL: emu.baseUrl,
        RECRUIT_SYNC_API_TOKEN: emu.token,
        REDIS_URL,
      },
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
}

/** Batches the run's ledger has recorded as answered. */
async function recorded(): Promise<number> {
  const [key] = await redis.redis.keys(`${redis.prefix}:import-ledger:*`);
  if (key === undefined) return 0;
  return (await redis.redis.hkeys(key)).filter((f) => f.startsWith("batch:")).length;
}

const answered = async () => (await emu.requests()).byRoute.importParticipants?.["200"] ?? 0;

describe("several import requests in flight", () => {
  it("after a SIGKILL mid-run, a rerun imports every person once and resends no more than were in flight", async () => {
    const child = cli();
    const exited = once(child, "exit");
    let exitedEarly = false;
    void exited.then(() => {
      exitedEarly = true;
    });
    while ((await recorded()) < 2 && !exitedEarly) await new Promise((r) => setTimeout(r, 10));
    child.kill("SIGKILL");
    const [, signal] = await exited;
    expect(signal).toBe("SIGKILL");
    const beforeRerun = await answered();
    expect(beforeRerun).toBeGreaterThanOrEqual(2);
    expect(beforeRerun).toBeLessThan(BATCHES);

    // The killed run's lock would lapse after its lease (30 s); lift it now instead of waiting.
    const locks = await redis.redis.keys(`${redis.prefix}:lock:import:*`);
    expect(locks).toHaveLength(1);
    await redis.redis.del(...locks);

    const rerun = cli();
    let stderr = "";
    rerun.stderr?.on("data", (d) => {
      stderr += String(d);
    });
    const [code] = await once(rerun, "exit");
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
    const report = ImportReport.parse(JSON.parse(await readFile(path.join(s.dir, "report.json"), "utf8")));
    expect(report).toMatchObject({
      status: "completed",
      rowsRead: PEOPLE,
      imported: PEOPLE,
      batches: BATCHES,
    });
    // Batches the ledger had recorded were not sent again; the rest were, once each.
    expect(report.batchesResumed).toBeGreaterThan(0);
    expect(report.requests).toBe(BATCHES - report.batchesResumed);
    const total = await answered();
    expect(total).toBe(beforeRerun + report.requests);
    // Sent twice: answered before the kill but not yet recorded — at most the requests in flight.
    const sentTwice = total - BATCHES;
    expect(sentTwice).toBeGreaterThanOrEqual(0);
    expect(sentTwice).toBeLessThanOrEqual(IN_FLIGHT);

    const snap = await emu.snapshot();
    const emails = snap.people.map((p) => p.email).filter((e) => e?.startsWith("inflight"));
    expect(emails).toHaveLength(PEOPLE);
    expect(new Set(emails).size).toBe(PEOPLE);
    const participants = snap.participants.filter(
      (p) => p.studyId === "study_4" && p.email?.startsWith("inflight"),
    );
    expect(participants).toHaveLength(PEOPLE);
  });
});
