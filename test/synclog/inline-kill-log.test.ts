/**
 * `import --inline` killed with SIGKILL mid-import, then run again: the rerun
 * takes the killed run's run id, so sync_log holds each person of the file
 * once under one run with one sync_runs row, and nothing of the killed run
 * is left in the data folder, on DuckDB and PostgreSQL alike (issue 32).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readdir } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { personDigest } from "../../src/imports/index.ts";
import { CLI_BIN, runCli } from "../helpers/cli.ts";
import { withTestSchema } from "../helpers/postgres.ts";
import {
  answered,
  createProject,
  faultHarness,
  importJob,
  largePeopleCsv,
  waitUntil,
} from "../queue/helpers.ts";
import { readLog } from "./read-log.ts";

const h = faultHarness();
const ROWS = 3000;
const JOB = "inline-kill";

/** The sync log's part files left in the data folder: they hold emails. */
async function partFiles(dataDir: string): Promise<string[]> {
  const left = await readdir(path.join(dataDir, "imports")).catch(() => []);
  return left.filter((f) => /\.sync-log\.\d+\.csv$/.test(f));
}

/** The job's rows in sync_log and sync_runs; none while the warehouse is not there yet or is held. */
async function jobLog(url: string) {
  const { log, runs } = await readLog(url).catch(() => ({ log: [], runs: [] }));
  return { log: log.filter((r) => r.job === JOB), runs: runs.filter((r) => r.job === JOB) };
}

function startInline(args: string[], cwd: string, env: NodeJS.ProcessEnv) {
  const child: ChildProcess = spawn(process.execPath, [CLI_BIN, ...args], {
    cwd,
    env,
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once("exit", (_, s) => resolve(s)));
  return { child, exited, stderr: () => stderr };
}

for (const kind of ["duckdb", "postgres"] as const) {
  describe(`import --inline killed mid-import, logging into ${kind}`, () => {
    it("is resumed by the rerun under the killed run's id: each person once in sync_log, one sync_runs row, no part file left", async () => {
      const schema = kind === "postgres" ? await withTestSchema() : undefined;
      try {
        const project = await createProject({
          redisUrl: h.redis.url,
          emulator: h.emu,
          jobs: { [JOB]: importJob(50) },
          // Parts of 200: the killed run has loaded some before the kill, which the rerun must replace.
          syncLog: { enabled: true, partLines: 200 },
          ...(schema ? { warehouse: schema.url } : {}),
        });
        h.project = project;
        const url = schema?.url ?? `duckdb:${project.warehouseFile}`;
        const dataDir = path.join(project.dir, "data");
        const { csv, emails } = largePeopleCsv(JOB, ROWS);
        const file = await project.file("people.csv", csv);
        const args = ["--config", project.configDir, "import", "--inline", "--job", JOB, file];
        // Slow enough that the kill lands with most batches still to send, after a part is loaded.
        await h.emu.admin("/faults", { body: { route: "importParticipants", latencyMs: [150, 250] } });

        const first = startInline(args, project.dir, project.env);
        try {
          await waitUntil(
            "10 import answers",
            async () => (await answered(h.emu, "importParticipants")) >= 10,
            {
              context: first.stderr,
            },
          );
          await waitUntil("a part of the log loaded", async () => (await jobLog(url)).log.length > 0, {
            context: first.stderr,
          });
          first.child.kill("SIGKILL");
          expect(await first.exited).toBe("SIGKILL");
        } finally {
          if (first.child.exitCode === null && first.child.signalCode === null) first.child.kill("SIGKILL");
        }
        const killed = await jobLog(url);
        expect(killed.log.length).toBeGreaterThan(0);
        expect(killed.log.length).toBeLessThan(ROWS);
        expect(killed.runs).toEqual([]);
        // The killed run left its part being written (and maybe more): the rerun must take them over.
        expect(await partFiles(dataDir)).not.toEqual([]);
        const killedRunId = String(killed.log[0]?.run_id);

        await h.emu.admin("/faults", { body: { route: "importParticipants", latencyMs: [10, 30] } });
        const rerun = await runCli(args, { cwd: project.dir, env: project.env, timeoutMs: 60_000 });
        expect(rerun.code, rerun.stderr).toBe(0);
        // The ledger let it resume: the batches answered before the kill were not sent again.
        expect(rerun.stdout).toMatch(/finished earlier, not resent/);

        const { log, runs } = await jobLog(url);
        const digests = log.map((r) => String(r.person_digest));
        expect(digests).toHaveLength(ROWS);
        expect(new Set(digests)).toEqual(new Set(emails.map((e) => personDigest("email", e))));
        expect(new Set(log.map((r) => r.run_id))).toEqual(new Set([killedRunId]));
        expect(runs.map((r) => [r.runId, r.status])).toEqual([[killedRunId, "succeeded"]]);
        expect(await partFiles(dataDir)).toEqual([]);

        // A run after one that finished is a run of its own, under a new id; the finished run's log stays.
        const again = await runCli([...args, "--force"], {
          cwd: project.dir,
          env: project.env,
          timeoutMs: 60_000,
        });
        expect(again.code, again.stderr).toBe(0);
        const after = await jobLog(url);
        expect(after.runs).toHaveLength(2);
        const fresh = after.runs.find((r) => r.runId !== killedRunId);
        expect(fresh?.status).toBe("succeeded");
        expect(after.log.filter((r) => r.run_id === killedRunId)).toHaveLength(ROWS);
        expect(after.log.filter((r) => r.run_id === fresh?.runId)).toHaveLength(ROWS);
        expect(await partFiles(dataDir)).toEqual([]);
      } finally {
        await schema?.cleanup();
      }
    }, 120_000);
  });
}
