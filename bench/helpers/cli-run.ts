/**
 * What the end-to-end benches share: the emulator in its own process, a
 * throwaway project directory (config + job) for the CLI, and one run of
 * `bin/recruit-sync.mjs` with its wall time and peak RSS.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { createInterface } from "node:readline";
import { z } from "zod";
import { RunReport } from "../../src/exports/index.ts";

const here = path.dirname(new URL(import.meta.url).pathname);
export const BIN = path.resolve(here, "../../bin/recruit-sync.mjs");
export const TOKEN = "bench-token";
export const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

/**
 * The command line of `recruit-sync import --inline` of a HubSpot export into
 * `study`, as the import benches run it: node, the bin under `root`, the
 * preset, US phones, the run report written to `report`.
 */
export function hubspotImportCommand(
  file: string,
  options: { study: string; report: string; root?: string; force?: boolean; cpuProfDir?: string | undefined },
): string[] {
  return [
    process.execPath,
    ...(options.cpuProfDir ? ["--cpu-prof", "--cpu-prof-dir", options.cpuProfDir] : []),
    options.root ? path.join(options.root, "bin/recruit-sync.mjs") : BIN,
    "import",
    file,
    ...["--preset", "hubspot", "--study", options.study, "--phone-country", "US", "--inline"],
    ...(options.force ? ["--force"] : []),
    ...["--report", options.report],
  ];
}

export interface EmulatorProcess {
  origin: string;
  baseUrl: string;
  /** The emulator's process id, to read its CPU time from /proc. */
  pid: number;
  admin(p: string, body?: unknown, method?: string): Promise<unknown>;
  /** `Authorization: Bearer <admin token>`, for a fetch of /__emulator made by hand. */
  adminHeaders: Record<string, string>;
  /** Requests the emulator answered for one route since the last reset, by status. */
  requests(route: string): Promise<Record<string, number>>;
  stop(): Promise<void>;
}

const Ready = z.object({ origin: z.string(), baseUrl: z.string(), adminToken: z.string() });
const RequestSummary = z.object({ byRoute: z.record(z.string(), z.record(z.string(), z.number())) });

/** Starts bench/helpers/emulator-process.ts with `participants` in `study` (in each, given several). */
export async function startEmulatorProcess(
  study: string | readonly string[],
  participants: number,
): Promise<EmulatorProcess> {
  const studies = typeof study === "string" ? [study] : study;
  const child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      path.join(here, "emulator-process.ts"),
      "--token",
      TOKEN,
      ...studies.flatMap((s) => ["--study", s]),
      "--participants",
      String(participants),
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  const line = await new Promise<string>((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`the emulator process exited with ${code} at start`)));
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).once("line", resolve);
  });
  const { origin, baseUrl, adminToken } = Ready.parse(JSON.parse(line));
  const adminHeaders = { authorization: `Bearer ${adminToken}` };
  const admin = async (p: string, body?: unknown, method = body === undefined ? "GET" : "POST") => {
    const res = await fetch(`${origin}/__emulator${p}`, {
      method,
      ...(body === undefined
        ? { headers: adminHeaders }
        : {
            headers: { ...adminHeaders, "content-type": "application/json" },
            body: JSON.stringify(body),
          }),
    });
    if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<unknown>;
  };
  return {
    origin,
    baseUrl,
    pid: child.pid as number,
    admin,
    adminHeaders,
    async requests(route) {
      return RequestSummary.parse(await admin("/requests")).byRoute[route] ?? {};
    },
    stop: () => stopChild(child),
  };
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}

/** A project directory for the CLI: config/default.yaml with its own Redis prefix, and jobs/NAME.yaml. */
export async function writeProject(
  dir: string,
  opts: { baseUrl: string; prefix: string; job: Record<string, string>; config?: readonly string[] },
): Promise<void> {
  await mkdir(path.join(dir, "config"), { recursive: true });
  await mkdir(path.join(dir, "jobs"), { recursive: true });
  for (const [name, yaml] of Object.entries(opts.job)) {
    await writeFile(path.join(dir, "jobs", `${name}.yaml`), yaml);
  }
  await writeFile(
    path.join(dir, "config", "default.yaml"),
    [
      "service:",
      `  baseUrl: ${opts.baseUrl}`,
      "redis:",
      `  url: ${REDIS_URL}`,
      `  prefix: ${opts.prefix}`,
      "warehouse:",
      "  url: duckdb:./data/warehouse.duckdb",
      "paths:",
      "  jobsDir: ./jobs",
      "  dataDir: ./data",
      "log:",
      "  level: warn",
      ...(opts.config ?? []),
      "",
    ].join("\n"),
  );
}

export interface CliRun {
  /** From spawn to exit, s: what a person at the terminal waits. */
  wallS: number;
  /** Peak resident set of the CLI process, MB (sampled every 50 ms from /proc). */
  peakRssMb: number;
  report: RunReport;
}

/** Reads VmHWM (the kernel's own peak RSS) of a live process, in kB; undefined once it is gone. */
async function peakRssKb(pid: number): Promise<number | undefined> {
  try {
    const status = await readFile(`/proc/${pid}/status`, "utf8");
    const m = /VmHWM:\s+(\d+) kB/.exec(status);
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

export interface Measured {
  wallS: number;
  peakRssMb: number;
  stdout: string;
}

/** Runs a Node program with `args` in `cwd`, sampling its peak RSS (VmHWM) every 50 ms. */
export async function runMeasured(args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<Measured> {
  const started = performance.now();
  const child = spawn(process.execPath, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  let peakKb = 0;
  // VmHWM is the process's own high-water mark: a sample only has to come before the exit.
  const sample = setInterval(() => {
    if (child.pid === undefined) return;
    void peakRssKb(child.pid).then((kb) => {
      if (kb !== undefined && kb > peakKb) peakKb = kb;
    });
  }, 50);
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  clearInterval(sample);
  const wallS = (performance.now() - started) / 1000;
  if (code !== 0) throw new Error(`${args.join(" ")} exited with ${code}: ${stderr.slice(-2000)}`);
  return { wallS, peakRssMb: peakKb / 1024, stdout };
}

/** The environment without the shell's RECRUIT_SYNC_* settings: the project's config decides. */
export function cleanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("RECRUIT_SYNC_"))),
    ...extra,
  };
}

/** Runs `recruit-sync export --inline ...args --report FILE` in `dir` and returns its report. */
export async function runCliExport(dir: string, args: string[]): Promise<CliRun> {
  const reportFile = path.join(dir, `report-${Date.now()}.json`);
  // BENCH_CLI_CPU_PROF=DIR: the CLI's V8 profiles go there (node refuses --cpu-prof in NODE_OPTIONS).
  const prof = process.env.BENCH_CLI_CPU_PROF;
  const m = await runMeasured(
    [
      ...(prof ? ["--cpu-prof", `--cpu-prof-dir=${prof}`] : []),
      BIN,
      "export",
      "--inline",
      ...args,
      "--report",
      reportFile,
    ],
    dir,
    cleanEnv({
      RECRUIT_SYNC_API_TOKEN: TOKEN,
      RECRUIT_SYNC_CONFIG_DIR: path.join(dir, "config"),
      ...(process.env.BENCH_CLI_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_CLI_NODE_OPTIONS } : {}),
    }),
  );
  const report = RunReport.parse(JSON.parse(await readFile(reportFile, "utf8")));
  return { wallS: m.wallS, peakRssMb: m.peakRssMb, report };
}
