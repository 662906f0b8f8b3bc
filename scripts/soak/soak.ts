/**
 * The chaos soak: `npm run soak -- --minutes N` (not part of `npm test`).
 *
 * Several `recruit-sync worker` processes import files of known people
 * dropped into a watched folder and run a scheduled export into PostgreSQL,
 * while this script kills them (SIGKILL and SIGTERM), restarts Redis (with
 * AOF, and once with its data wiped), and the emulator answers with 500s,
 * dropped connections and latency. At the end it checks that nothing was
 * lost, nothing is wrong and nobody's data reached a log, and prints what it
 * saw. Exit 0 when every check holds. Everything runs on loopback.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { createWriteStream, type WriteStream } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { Redis } from "ioredis";
import pg from "pg";
import { stringify as toYaml } from "yaml";
import { type RunningEmulator, startEmulator } from "../../src/emulator/index.ts";
import { ImportReport } from "../../src/imports/report.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");
const BIN = path.join(ROOT, "bin/recruit-sync.mjs");
const DATABASE_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const STUDY = "study_2";
const TOKEN = "soak-token";
/** Import requests one run keeps in flight (config imports.concurrency): what a kill may resend. */
const IN_FLIGHT = 2;
/** The final export reads every participant again; it is given this long. */
const FINAL_EXPORT_LIMIT_MS = 900_000;

const { values: args } = parseArgs({
  options: {
    minutes: { type: "string", default: "10" },
    workers: { type: "string", default: "3" },
    keep: { type: "boolean", default: false },
  },
});
const minutes = Number(args.minutes);
const workerCount = Number(args.workers);
if (!(minutes > 0) || !(workerCount > 0)) {
  console.error("usage: npm run soak -- [--minutes N] [--workers N] [--keep]");
  process.exit(2);
}

const started = Date.now();
/** Every process this script started: none may outlive it, however it ends. */
const children = new Set<ChildProcess>();
process.on("exit", () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
});
const say = (line: string) =>
  console.log(`[${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${line}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const between = (lo: number, hi: number) => lo + Math.random() * (hi - lo);

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

// ---------------------------------------------------------------- Redis of its own, with AOF

class SoakRedis {
  child: ChildProcess | undefined;
  restarts = { withAof: 0, wiped: 0 };
  constructor(
    readonly port: number,
    readonly dir: string,
  ) {}
  get url() {
    return `redis://127.0.0.1:${this.port}`;
  }
  async start(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    this.child = spawn(
      "redis-server",
      ["--port", String(this.port), "--bind", "127.0.0.1", "--dir", this.dir, "--save", ""].concat([
        "--appendonly",
        "yes",
        "--appendfsync",
        "always",
        "--maxmemory-policy",
        "noeviction",
      ]),
      { stdio: "ignore" },
    );
    children.add(this.child);
    for (let i = 0; i < 100; i++) {
      const probe = new Redis(this.url, {
        lazyConnect: true,
        retryStrategy: () => null,
        maxRetriesPerRequest: 0,
      });
      probe.on("error", () => {});
      const ok = await probe
        .connect()
        .then(() => probe.ping())
        .then(() => true)
        .catch(() => false);
      probe.disconnect();
      if (ok) return;
      await sleep(100);
    }
    throw new Error("redis-server did not start");
  }
  /** Stops it: with its AOF kept (a clean restart), or with its data wiped (a restart without persistence). */
  async stop(wipe: boolean): Promise<void> {
    const admin = new Redis(this.url, { maxRetriesPerRequest: 1, retryStrategy: () => null });
    admin.on("error", () => {});
    const exited = new Promise<void>((r) => this.child?.once("exit", () => r()));
    await admin.call("SHUTDOWN", wipe ? "NOSAVE" : "SAVE").catch(() => {});
    admin.disconnect();
    await exited;
    if (wipe) await rm(this.dir, { recursive: true, force: true });
  }
  async restart(wipe: boolean, downMs: number): Promise<void> {
    await this.stop(wipe);
    await sleep(downMs);
    await this.start();
    if (wipe) this.restarts.wiped++;
    else this.restarts.withAof++;
  }
}

// ---------------------------------------------------------------- workers

class Worker {
  child: ChildProcess | undefined;
  generation = 0;
  constructor(
    readonly n: number,
    readonly configDir: string,
    readonly logs: string,
    readonly env: NodeJS.ProcessEnv,
  ) {}
  get running() {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }
  start(): void {
    this.generation++;
    const log: WriteStream = createWriteStream(
      path.join(this.logs, `worker-${this.n}-${this.generation}.log`),
    );
    this.child = spawn(process.execPath, [BIN, "--config", this.configDir, "worker"], {
      cwd: path.dirname(this.configDir),
      env: this.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    children.add(this.child);
    this.child.stdout?.pipe(log);
    this.child.stderr?.pipe(log);
  }
  async kill(signal: NodeJS.Signals): Promise<void> {
    const child = this.child;
    if (!child || !this.running) return;
    const exited = new Promise<void>((r) => child.once("exit", () => r()));
    child.kill(signal);
    // A SIGTERM drains within the shutdown deadline; past that, it is killed.
    const deadline = setTimeout(() => child.kill("SIGKILL"), 20_000);
    await exited;
    clearTimeout(deadline);
  }
}

// ---------------------------------------------------------------- files of known people

interface Dropped {
  name: string;
  emails: string[];
  /** Rows in the file, duplicates included. */
  rows: number;
  /** A file that must fail (no identifier column), and the code it must fail with. */
  expectFailure?: string;
}

function peopleFile(tag: string, people: number): { csv: string; emails: string[]; rows: number } {
  const emails = Array.from({ length: people }, (_, i) => `${tag}-${i + 1}@soak.example.org`);
  const lines = emails.map((e, i) => `${e},Soakfirst${i},Soaklast${tag.replace(/\W/g, "")}x${i}`);
  // One row in twenty names a person again, later, with another first name: merged, not a second person.
  for (let i = 0; i < people; i += 20)
    lines.push(`${emails[i]},Again${i},Soaklast${tag.replace(/\W/g, "")}x${i}`);
  return { csv: `Email,First Name,Last Name\n${lines.join("\n")}\n`, emails, rows: lines.length };
}

// ---------------------------------------------------------------- the run

async function main(): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), "recruit-sync-soak-"));
  const logs = path.join(dir, "logs");
  const inbox = path.join(dir, "inbox");
  const staging = path.join(dir, "staging");
  for (const d of [logs, inbox, staging, path.join(dir, "config"), path.join(dir, "jobs")]) {
    await mkdir(d, { recursive: true, mode: 0o700 });
  }
  const redis = new SoakRedis(await freePort(), path.join(dir, "redis"));
  await redis.start();
  const emulator: RunningEmulator = await startEmulator({
    port: 0,
    host: "127.0.0.1",
    admin: true,
    tokens: [TOKEN],
    rateLimit: "40/2s",
    sizes: { people: 200 },
    // Answers slow enough that an import of a few thousand people takes seconds, so kills land mid-run.
    faults: [{ route: "*", errorRate: 0.03, dropRate: 0.01, latencyMs: [20, 150] }],
  });
  const schema = `soak_${randomUUID().replaceAll("-", "")}`;
  const admin = new pg.Client({ connectionString: DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA "${schema}"`);
  const warehouseUrl = new URL(DATABASE_URL);
  warehouseUrl.searchParams.set("options", `-c search_path=${schema}`);

  const prefix = `soak-${randomUUID()}`;
  await writeFile(
    path.join(dir, "config/default.yaml"),
    toYaml({
      service: {
        baseUrl: emulator.baseUrl,
        timeoutMs: 10_000,
        retry: { maxAttempts: 8, baseDelayMs: 100, maxDelayMs: 2000 },
      },
      redis: { url: redis.url, prefix },
      warehouse: { url: warehouseUrl.toString() },
      paths: { jobsDir: "./jobs", dataDir: "./data" },
      log: { level: "info" },
      queue: {
        attempts: 20,
        backoffMs: 1000,
        shutdownDeadlineMs: 10_000,
        lockMs: 5000,
        budgetWaitBoundMs: 5000,
      },
      watch: [{ folder: "./inbox", job: "soak-import", stableMs: 500 }],
    }),
  );
  await writeFile(
    path.join(dir, "jobs/soak-import.yaml"),
    toYaml({
      kind: "import",
      target: { studyId: STUDY },
      columns: [
        { column: "Email", to: "email" },
        { column: "First Name", to: "firstName" },
        { column: "Last Name", to: "lastName" },
      ],
      batchSize: 100,
    }),
  );
  await writeFile(
    path.join(dir, "jobs/soak-export.yaml"),
    toYaml({
      kind: "export",
      resources: ["participants"],
      studies: [STUDY],
      pageSize: 100,
      schedule: { cron: "*/30 * * * * *", timezone: "UTC" },
    }),
  );
  const env: NodeJS.ProcessEnv = { ...process.env, RECRUIT_SYNC_API_TOKEN: TOKEN };
  for (const k of [
    "REDIS_URL",
    "RECRUIT_SYNC_BASE_URL",
    "RECRUIT_SYNC_WAREHOUSE",
    "RECRUIT_SYNC_CONFIG_DIR",
    "LOG_LEVEL",
    "NODE_ENV",
  ]) {
    delete env[k];
  }
  const configDir = path.join(dir, "config");
  const workers = Array.from({ length: workerCount }, (_, i) => new Worker(i + 1, configDir, logs, env));
  for (const w of workers) w.start();
  say(
    `soak for ${minutes} min in ${dir}: ${workerCount} workers, redis ${redis.url} (AOF), emulator ${emulator.baseUrl}, warehouse schema ${schema}`,
  );

  const dropped: Dropped[] = [];
  const kills = { SIGKILL: 0, SIGTERM: 0 };
  const deadline = started + minutes * 60_000;
  const restartsAt = [0.2, 0.4, 0.6, 0.8].map((f) => started + f * minutes * 60_000);
  const wipeAt = started + 0.5 * minutes * 60_000;
  let wiped = false;
  let wipedAt = 0;
  let nextKill = Date.now() + between(5_000, 12_000);
  let nextDrop = Date.now() + 2_000;
  let fileNo = 0;
  let chaosOver = false;
  const restarts = new Set<Promise<void>>();

  while (Date.now() < deadline) {
    const now = Date.now();
    if (now >= nextDrop) {
      fileNo++;
      const name = `crm-${String(fileNo).padStart(3, "0")}.csv`;
      if (fileNo % 6 === 0) {
        // No identifier column: must end in failed/ with the reason, nothing imported.
        await writeFile(path.join(staging, name), "Name,Company\nSoakbad Person,Soak Inc\n", { mode: 0o600 });
        dropped.push({ name, emails: [], rows: 1, expectFailure: "file_missing_column" });
      } else {
        const f = peopleFile(`f${fileNo}`, Math.round(between(1000, 6000)));
        await writeFile(path.join(staging, name), f.csv, { mode: 0o600 });
        dropped.push({ name, emails: f.emails, rows: f.rows });
      }
      // Dropped whole, as a file manager's move does.
      await rename(path.join(staging, name), path.join(inbox, name));
      nextDrop = now + between(6_000, 15_000);
    }
    if (now >= nextKill) {
      const w = workers[Math.floor(Math.random() * workers.length)];
      if (w?.running) {
        const signal: NodeJS.Signals = Math.random() < 0.7 ? "SIGKILL" : "SIGTERM";
        kills[signal]++;
        say(`${signal} worker ${w.n}`);
        restarts.add(
          w.kill(signal).then(async () => {
            await sleep(between(500, 3000));
            if (!chaosOver) w.start();
          }),
        );
      }
      nextKill = now + between(8_000, 18_000);
    }
    if (!wiped && now >= wipeAt) {
      wiped = true;
      say("redis: restart WITHOUT its data (SHUTDOWN NOSAVE, AOF removed)");
      await redis.restart(true, between(1000, 3000));
      wipedAt = Date.now();
    } else if (restartsAt.length && now >= (restartsAt[0] ?? Infinity)) {
      restartsAt.shift();
      say("redis: restart with AOF");
      await redis.restart(false, between(1000, 4000));
    }
    await sleep(250);
  }

  chaosOver = true;
  const chaosEndedAt = Date.now();
  await Promise.all(restarts);
  say("chaos over: every worker up, waiting for every dropped file to be filed");
  for (const w of workers) if (!w.running) w.start();
  const filed = await waitFiled(inbox, dropped, 240_000);

  // One export after the last import, so the warehouse must equal the service now.
  say("final export through the queue (--wait)");
  const exportStarted = Date.now();
  // A full pass over every participant at the emulator's quota, with its faults still on: minutes, not seconds.
  const finalExport = await runCli(
    ["--config", configDir, "export", "--job", "soak-export", "--wait"],
    env,
    dir,
    FINAL_EXPORT_LIMIT_MS,
  );
  say(
    `final export ended with exit ${finalExport.code} after ${((Date.now() - exportStarted) / 1000).toFixed(0)} s`,
  );
  for (const w of workers) await w.kill("SIGTERM");

  const problems: string[] = [];
  const snapshot = await emulatorSnapshot(emulator);
  // 1. every person of every good file in the service, exactly once, and a participant of the study
  const byEmail = new Map<string, number>();
  for (const p of snapshot.people)
    if (p.email) byEmail.set(p.email.toLowerCase(), (byEmail.get(p.email.toLowerCase()) ?? 0) + 1);
  let people = 0;
  let missing = 0;
  let twice = 0;
  for (const d of dropped) {
    for (const e of d.emails) {
      people++;
      const n = byEmail.get(e) ?? 0;
      if (n === 0) missing++;
      if (n > 1) twice++;
    }
  }
  if (missing) problems.push(`${missing} of ${people} people of the dropped files are not in the service`);
  if (twice) problems.push(`${twice} people are in the service more than once`);
  // 2. every file filed where it belongs, with counts that add up
  let batches = 0;
  let sentByEarlierAttempt = 0;
  for (const d of dropped) {
    const where = filed.get(d.name);
    if (!where) {
      problems.push(`${d.name} was never filed (still in the inbox or processing/)`);
      continue;
    }
    if (d.expectFailure) {
      if (where.folder !== "failed") problems.push(`${d.name} should have failed but is in ${where.folder}/`);
      else if (!JSON.stringify(where.report).includes(d.expectFailure))
        problems.push(`${d.name} failed without ${d.expectFailure}`);
      continue;
    }
    if (where.folder !== "processed") {
      problems.push(`${d.name} is in ${where.folder}/: ${JSON.stringify(where.report).slice(0, 300)}`);
      continue;
    }
    const report = ImportReport.safeParse(where.report);
    if (!report.success) {
      problems.push(`${d.name}: its report does not parse`);
      continue;
    }
    const r = report.data;
    // Every person is new to the service, so `unchanged` can only be people an interrupted attempt of the
    // same job sent (and the change state recorded): sent, not sent again.
    sentByEarlierAttempt += r.unchanged;
    if (
      r.rowsRead !== d.rows ||
      r.imported + r.unchanged + r.rejected + r.duplicates !== r.rowsRead ||
      r.imported + r.unchanged !== d.emails.length
    ) {
      problems.push(
        `${d.name}: rows ${r.rowsRead}/${d.rows}, imported ${r.imported} + unchanged ${r.unchanged} of ${d.emails.length}, rejected ${r.rejected}, duplicates ${r.duplicates}`,
      );
    }
    batches += r.batches;
  }
  // 3. import requests against batches: a kill resends at most what was in flight; a wipe may resend whole files
  const requests = await emulatorRequests(emulator);
  const importsAnswered = requests.byRoute.importParticipants?.["200"] ?? 0;
  const resent = importsAnswered - batches;
  const killsTotal = kills.SIGKILL + kills.SIGTERM;
  const bound = IN_FLIGHT * (killsTotal + redis.restarts.withAof);
  // 4. the warehouse equal to the service's participants of the study
  const inService = new Set(
    snapshot.participants.filter((p) => p.studyId === STUDY).map((p) => p.participantId),
  );
  const rows = await admin
    .query<{ participant_id: string }>(
      `SELECT participant_id FROM "${schema}".participants WHERE study_id = $1 AND _deleted_at IS NULL`,
      [STUDY],
    )
    .catch((err: Error) => {
      problems.push(`warehouse: ${err.message}`);
      return { rows: [] as { participant_id: string }[] };
    });
  const inWarehouse = new Set(rows.rows.map((r) => r.participant_id));
  const notLoaded = [...inService].filter((id) => !inWarehouse.has(id)).length;
  const extra = [...inWarehouse].filter((id) => !inService.has(id)).length;
  if (finalExport.code !== 0)
    problems.push(
      finalExport.timedOut
        ? `the final export did not end within ${FINAL_EXPORT_LIMIT_MS / 1000} s`
        : `the final export failed: ${finalExport.stderr.trim().slice(0, 300)}`,
    );
  if (notLoaded || extra)
    problems.push(`warehouse: ${notLoaded} participants missing, ${extra} that the service does not have`);
  // The schedule outlives Redis losing its data: scheduled exports ran after the wipe, before the final one.
  const runs = await admin
    .query<{ started: Date; status: string }>(
      `SELECT min(started_at) AS started, min(status) AS status FROM "${schema}".sync_runs GROUP BY run_id ORDER BY 1`,
    )
    .catch(() => ({ rows: [] as { started: Date; status: string }[] }));
  const scheduledAfterWipe = runs.rows.filter(
    (r) => wipedAt > 0 && r.started.getTime() > wipedAt && r.started.getTime() < chaosEndedAt,
  ).length;
  if (wipedAt > 0 && scheduledAfterWipe === 0)
    problems.push("no scheduled export ran after Redis lost its data");
  // The wipe was noticed, said, and the jobs it took were enqueued again.
  const lossSaid = await loglinesMatching(logs, (l) => l.msg.startsWith("Redis lost its data"));
  const requeued = await loglinesMatching(logs, (l) => l.code === "job_lost" && l.msg.startsWith("job lost"));
  if (wipedAt > 0 && lossSaid === 0) problems.push("no worker said that Redis lost its data");
  // 5. nobody's data in any log
  const leaks = await personalDataInLogs(logs, dropped);
  if (leaks.length) problems.push(`personal data in logs: ${leaks.slice(0, 3).join("; ")}`);

  const lines = [
    `duration: ${((Date.now() - started) / 60_000).toFixed(1)} min, ${workerCount} workers`,
    `kills: ${killsTotal} (${kills.SIGKILL} SIGKILL, ${kills.SIGTERM} SIGTERM); redis restarts: ${redis.restarts.withAof} with AOF, ${redis.restarts.wiped} with its data wiped`,
    `files dropped: ${dropped.length} (${dropped.filter((d) => d.expectFailure).length} meant to fail); filed: ${filed.size}`,
    `people: ${people} in the files, ${people - missing} in the service, ${twice} more than once; ${sentByEarlierAttempt} reported unchanged (sent by an interrupted attempt of their job)`,
    `import requests answered 200: ${importsAnswered} for ${batches} batches: ${resent} resent (bound without a wipe: ${bound}; a wipe loses the ledger, so files in flight then are sent again whole)`,
    `service answers: ${requests.total} (${Object.entries(requests.byStatus)
      .map(([s, n]) => `${s}: ${n}`)
      .join(", ")})`,
    `warehouse: ${inWarehouse.size} live participants of ${STUDY}, service ${inService.size}; export runs: ${runs.rows.length} (${scheduledAfterWipe} scheduled ones after the wipe)`,
    `Redis losing its data: said by ${lossSaid} worker(s), ${requeued} running job(s) enqueued again from a worker's copy`,
    `personal data in ${leaks.length} log lines`,
  ];
  console.log(`\n== soak summary\n${lines.join("\n")}`);
  console.log(
    problems.length
      ? `\n== ${problems.length} problem(s)\n${problems.join("\n")}`
      : "\n== nothing lost, nothing wrong, no personal data in logs",
  );

  await emulator.close();
  await admin.query(`DROP SCHEMA "${schema}" CASCADE`).catch(() => {});
  await admin.end();
  await redis.stop(false).catch(() => {});
  if (!args.keep) await rm(dir, { recursive: true, force: true });
  else console.log(`kept: ${dir}`);
  process.exit(problems.length ? 1 : 0);
}

/** Where each dropped file ended: processed/ or failed/, with its report; waits until all are there or the time is up. */
async function waitFiled(inbox: string, dropped: Dropped[], timeoutMs: number) {
  const filed = new Map<string, { folder: "processed" | "failed"; report: unknown }>();
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    for (const folder of ["processed", "failed"] as const) {
      const names = await readdir(path.join(inbox, folder)).catch(() => [] as string[]);
      for (const d of dropped) {
        if (filed.has(d.name)) continue;
        // A file and its report: the report says how it ended.
        const report = names.find(
          (n) => n.startsWith(d.name.replace(/\.csv$/, "")) && n.endsWith(".report.json"),
        );
        if (!report) continue;
        const text = await readFile(path.join(inbox, folder, report), "utf8").catch(() => "");
        filed.set(d.name, { folder, report: JSON.parse(text || "null") });
      }
    }
    if (filed.size >= dropped.length) break;
    await sleep(1000);
  }
  return filed;
}

async function emulatorSnapshot(emulator: RunningEmulator) {
  const res = await fetch(`${emulator.origin}/__emulator/snapshot`, {
    headers: { authorization: `Bearer ${emulator.adminToken}` },
  });
  return (await res.json()) as {
    people: { email?: string | null }[];
    participants: { participantId: string; studyId: string }[];
  };
}

async function emulatorRequests(emulator: RunningEmulator) {
  const res = await fetch(`${emulator.origin}/__emulator/requests`, {
    headers: { authorization: `Bearer ${emulator.adminToken}` },
  });
  return (await res.json()) as {
    total: number;
    byRoute: Record<string, Record<string, number>>;
    byStatus: Record<string, number>;
  };
}

/** How many JSON log lines of the workers `match`. */
async function loglinesMatching(
  logs: string,
  match: (line: { msg: string; code?: string }) => boolean,
): Promise<number> {
  let n = 0;
  for (const name of await readdir(logs)) {
    for (const line of (await readFile(path.join(logs, name), "utf8")).split("\n")) {
      if (!line.startsWith("{")) continue;
      try {
        const parsed = JSON.parse(line) as { msg?: unknown; code?: unknown };
        if (typeof parsed.msg !== "string") continue;
        if (match({ msg: parsed.msg, ...(typeof parsed.code === "string" ? { code: parsed.code } : {}) }))
          n++;
      } catch {}
    }
  }
  return n;
}

/** Log lines holding an email or a last name of the dropped files. */
async function personalDataInLogs(logs: string, dropped: Dropped[]): Promise<string[]> {
  const leaks: string[] = [];
  for (const name of await readdir(logs)) {
    const text = await readFile(path.join(logs, name), "utf8");
    if (/soak\.example\.org|Soaklast|Soakbad/i.test(text)) {
      const line = text.split("\n").find((l) => /soak\.example\.org|Soaklast|Soakbad/i.test(l)) ?? "";
      leaks.push(`${name}: ${line.slice(0, 200)}`);
    }
  }
  void dropped;
  return leaks;
}

function runCli(argv: string[], env: NodeJS.ProcessEnv, cwd: string, limitMs = 300_000) {
  return new Promise<{ code: number; stdout: string; stderr: string; timedOut: boolean }>((resolve) => {
    let timedOut = false;
    const child = spawn(process.execPath, [BIN, ...argv], { env, cwd, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => {
      stdout += d;
    });
    child.stderr.on("data", (d: Buffer) => {
      stderr += d;
    });
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, limitMs);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr, timedOut });
    });
  });
}

await main();
