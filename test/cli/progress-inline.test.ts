import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { REDIS_URL } from "../helpers/env.ts";
import { type TestRedis, withTestRedis } from "../helpers/redis.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");

describe("recruit-sync import --inline, its output a pipe", () => {
  let emu: TestEmulator;
  let redis: TestRedis;
  let dir: string;

  beforeAll(async () => {
    emu = await startTestEmulator();
    redis = await withTestRedis();
    dir = mkdtempSync(path.join(tmpdir(), "progress-inline-"));
    mkdirSync(path.join(dir, "config"));
    writeFileSync(
      path.join(dir, "config/default.yaml"),
      `service: { baseUrl: ${emu.baseUrl} }\nredis: { url: ${REDIS_URL}, prefix: ${redis.prefix} }\npaths: { jobsDir: ${path.join(ROOT, "jobs")}, dataDir: ./data }\n`,
    );
  });
  afterAll(async () => {
    await emu.close();
    await redis.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it("prints plain progress lines from the progress model, then the summary and the table", async () => {
    const r = await runCli(
      ["import", path.join(ROOT, "samples/hubspot-contacts.csv"), "--job", "hubspot-contacts", "--inline"],
      { cwd: dir, env: { RECRUIT_SYNC_API_TOKEN: emu.token } },
    );
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    // A pipe gets no cursor moves and no bars, only lines.
    expect(r.stdout).not.toContain("\x1b");
    const lines = r.stdout.split("\n");
    const at = (re: RegExp) => lines.findIndex((l) => re.test(l));
    // One line at each phase, in order, then the last state, the summary and the table.
    const phases = [
      at(/^import: hash( \d+%)?, \d+ rows read, /),
      at(/^import: read( \d+%)?, \d+ rows read, /),
      at(/^import: send( \d+%)?, 13 rows read, \d+ imported, 1 rejected, \d+ batches/),
      at(/^import: done 100%, 13 rows read, 11 imported, 1 rejected, 3 batches/),
      at(/^hubspot-contacts: 13 rows read → 11 imported, 1 rejected/),
      at(/^ +rows read +imported +rejected +merged +batches +requests +seconds +rows\/s +budget wait s$/),
    ];
    for (const index of phases) expect(index).toBeGreaterThanOrEqual(0);
    expect([...phases].sort((a, b) => a - b)).toEqual(phases);
    expect(lines[(phases[5] ?? -2) + 1]).toMatch(/^ +13 +11 +1 +1 +3 +3 /);
  });
});
