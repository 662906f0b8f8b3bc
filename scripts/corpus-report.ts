/**
 * Measures the corpus (test/corpus/): for each export, `jobs suggest FILE
 * --study S` against a bundled emulator started here, then the suggestion
 * imported untouched as a dry run, and a table of what got through against the
 * hand count beside the file (<name>.expected.json).
 *
 *   npx tsx scripts/corpus-report.ts [NAME-FILTER]
 *
 * Needs Redis (REDIS_URL, default redis://127.0.0.1:6379) as the import does;
 * every run uses its own key prefix and temporary folders.
 */
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { startEmulator } from "../src/emulator/index.ts";
import { Expected } from "../test/corpus/expected.ts";

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "..");
const CORPUS = path.join(ROOT, "test/corpus");
const BIN = path.join(ROOT, "bin/recruit-sync.mjs");
const TOKEN = "corpus-token";

interface Row {
  file: string;
  expected: number;
  identifier: string;
  suggested: string;
  wouldImport: number | null;
  rejected: number | null;
  reasons: string;
  failed: string;
}

async function cli(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [BIN, ...args], {
      env: { ...process.env, ...env },
      maxBuffer: 64 * 1024 * 1024,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === "number" ? e.code : 1, stdout: e.stdout ?? "", stderr: e.stderr ?? "" };
  }
}

/** The report's counts, read loosely: the import's report shape belongs to another area. */
function countsOf(report: unknown): { imported: number | null; rejected: number | null; reasons: string } {
  const r = report as Record<string, unknown>;
  const counts = (r.counts ?? r.summary ?? r) as Record<string, unknown>;
  const num = (...keys: string[]) => {
    for (const k of keys) if (typeof counts[k] === "number") return counts[k] as number;
    return null;
  };
  const reasonsRaw = (r.rejectedByReason ??
    r.rejectReasons ??
    counts.rejectedByReason ??
    r.rejects) as unknown;
  let reasons = "";
  if (reasonsRaw && typeof reasonsRaw === "object") {
    const entries = Array.isArray(reasonsRaw)
      ? reasonsRaw.map((x) => [
          String((x as { reason?: unknown }).reason),
          Number((x as { count?: unknown }).count),
        ])
      : Object.entries(reasonsRaw as Record<string, number>);
    reasons = entries
      .sort((a, b) => Number(b[1]) - Number(a[1]))
      .slice(0, 3)
      .map(([k, v]) => `${String(k).slice(0, 70)} ${v}`)
      .join("; ");
  }
  return { imported: num("imported", "wouldImport", "sent"), rejected: num("rejected"), reasons };
}

/** The error line: the last one, after any notices printed before it. */
function errorLine(s: string): string {
  const lines = s
    .trim()
    .split("\n")
    .filter((l) => l.trim() !== "");
  return (lines[lines.length - 1] ?? "").slice(0, 160);
}

async function measure(file: string, baseUrl: string, redisPrefix: string): Promise<Row> {
  const name = path.basename(file, ".csv");
  const expected = Expected.parse(
    JSON.parse(await readFile(path.join(CORPUS, `${name}.expected.json`), "utf8")),
  );
  const work = await mkdtemp(path.join(tmpdir(), "corpus-report-"));
  const row: Row = {
    file: name,
    expected: expected.importable,
    identifier: expected.identifier,
    suggested: "-",
    wouldImport: null,
    rejected: null,
    reasons: "",
    failed: "",
  };
  try {
    const configDir = path.join(work, "config");
    const jobsDir = path.join(work, "jobs");
    await run("mkdir", ["-p", configDir, jobsDir]);
    await writeFile(
      path.join(configDir, "default.yaml"),
      `redis: { url: ${process.env.REDIS_URL ?? "redis://127.0.0.1:6379"}, prefix: "${redisPrefix}-${name}" }\n` +
        `paths: { dataDir: ${path.join(work, "data")}, jobsDir: ${jobsDir} }\n` +
        `service: { baseUrl: ${baseUrl} }\n`,
    );
    const env = {
      NODE_ENV: "",
      RECRUIT_SYNC_CONFIG_DIR: configDir,
      RECRUIT_SYNC_BASE_URL: baseUrl,
      RECRUIT_SYNC_API_TOKEN: TOKEN,
    };
    const job = `corpus-${name}`.slice(0, 60);
    const suggest = await cli(["jobs", "suggest", file, "--study", expected.study, "--name", job], env);
    if (suggest.code !== 0) {
      row.failed = `suggest exit ${suggest.code}: ${errorLine(suggest.stderr)}`;
      return row;
    }
    const identifier = suggest.stdout.match(/^\s*identifier:\s*(\S+)/m)?.[1] ?? "?";
    const preset = suggest.stdout.match(/^preset:\s*(\S+)/m)?.[1];
    row.suggested = preset ? `${identifier} (${preset})` : identifier;
    await writeFile(path.join(jobsDir, `${job}.yaml`), suggest.stdout);
    const report = path.join(work, "report.json");
    const imp = await cli(
      [
        "import",
        file,
        "--job",
        job,
        "--dry-run",
        "--inline",
        "--report",
        report,
        "--rejects",
        path.join(work, "rejects.csv"),
        "--requests",
        path.join(work, "requests.jsonl"),
      ],
      env,
    );
    try {
      const counts = countsOf(JSON.parse(await readFile(report, "utf8")));
      row.wouldImport = counts.imported;
      row.rejected = counts.rejected;
      row.reasons = counts.reasons;
    } catch {
      // No report: the run failed before writing one.
    }
    if (imp.code !== 0) row.failed = `import exit ${imp.code}: ${errorLine(imp.stderr || imp.stdout)}`;
    return row;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

function table(rows: Row[]): string {
  const head = [
    "file",
    "expected",
    "by",
    "suggested id",
    "would import",
    "ratio",
    "rejected",
    "top reject reasons",
    "failed",
  ];
  const lines = rows.map((r) => [
    r.file,
    String(r.expected),
    r.identifier,
    r.suggested,
    r.wouldImport === null ? "-" : String(r.wouldImport),
    r.wouldImport === null || r.expected === 0 ? "-" : `${Math.round((100 * r.wouldImport) / r.expected)}%`,
    r.rejected === null ? "-" : String(r.rejected),
    r.reasons,
    r.failed,
  ]);
  const all = [head, ...lines];
  const widths = head.map((_, i) => Math.max(...all.map((l) => (l[i] ?? "").length)));
  const fmt = (l: string[]) => `| ${l.map((c, i) => c.padEnd(widths[i] ?? 0)).join(" | ")} |`;
  return [fmt(head), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...lines.map(fmt)].join("\n");
}

async function main(): Promise<void> {
  const filter = process.argv[2];
  const files = (await readdir(CORPUS))
    .filter((f) => f.endsWith(".csv") && (!filter || f.includes(filter)))
    .sort()
    .map((f) => path.join(CORPUS, f));
  const emulator = await startEmulator({ port: 0, host: "127.0.0.1", tokens: [TOKEN], rateLimit: false });
  const prefix = `corpus-report-${randomUUID().slice(0, 8)}`;
  const rows: Row[] = [];
  try {
    for (const file of files) {
      rows.push(await measure(file, emulator.baseUrl, prefix));
      process.stderr.write(`${path.basename(file)} done\n`);
    }
  } finally {
    await emulator.close();
  }
  const expected = rows.reduce((s, r) => s + r.expected, 0);
  const through = rows.reduce((s, r) => s + Math.min(r.wouldImport ?? 0, r.expected), 0);
  const whole = rows.filter(
    (r) => r.wouldImport !== null && r.wouldImport >= 0.95 * r.expected && !r.failed,
  ).length;
  const failed = rows.filter((r) => r.failed).length;
  process.stdout.write(`${table(rows)}\n\n`);
  process.stdout.write(
    `${rows.length} files: ${through} of ${expected} importable people would import (${expected ? Math.round((100 * through) / expected) : 0}%), ` +
      `${whole} files at 95% or more, ${failed} failed outright\n`,
  );
}

await main();
