import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { parse } from "csv-parse/sync";
import { afterEach, beforeEach } from "vitest";
import { ImportJobDefinition, type ImportJobDefinitionInput } from "../../src/config/import-job.ts";
import { type ImportReport, runImport } from "../../src/imports/index.ts";
import { startTestEmulator, type TestEmulator, type TestEmulatorOptions } from "../helpers/emulator.ts";
import { type TestRedis, withTestRedis } from "../helpers/redis.ts";

export interface Scratch {
  dir: string;
  file(name: string, content: string | Buffer): Promise<string>;
  cleanup(): Promise<void>;
}

export async function scratch(): Promise<Scratch> {
  const dir = await mkdtemp(path.join(tmpdir(), "imports-test-"));
  return {
    dir,
    async file(name, content) {
      const p = path.join(dir, name);
      await writeFile(p, content);
      return p;
    },
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}

export interface ImportHarness {
  emu: TestEmulator;
  redis: TestRedis;
  s: Scratch;
  /** runImport against this test's emulator, Redis ledger and scratch folder, two requests in flight. */
  run(
    file: string,
    definition: ImportJobDefinition,
    extra?: Partial<Parameters<typeof runImport>[0]>,
  ): ReturnType<typeof runImport>;
  /** Import requests the emulator answered 200. */
  importCalls(): Promise<number>;
}

/** Each test's emulator, Redis prefix and scratch folder: made before it, removed after it. */
export function importHarness(emulator: TestEmulatorOptions = {}): ImportHarness {
  const h = {
    run(file, definition, extra = {}) {
      return runImport({
        file,
        definition,
        client: h.emu.client,
        rejectsFile: path.join(h.s.dir, "rejects.csv"),
        ledger: { redis: h.redis.redis, prefix: h.redis.prefix },
        workDir: h.s.dir,
        concurrency: 2,
        ...extra,
      });
    },
    async importCalls() {
      return (await h.emu.requests()).byRoute.importParticipants?.["200"] ?? 0;
    },
  } as ImportHarness;
  beforeEach(async () => {
    h.emu = await startTestEmulator(emulator);
    h.redis = await withTestRedis();
    h.s = await scratch();
  });
  afterEach(async () => {
    await h.emu.close();
    await h.redis.cleanup();
    await h.s.cleanup();
  });
  return h;
}

/** Email → email, Name → firstName: the smallest definition that exercises the pipeline. */
export function simpleDefinition(extra: Partial<ImportJobDefinitionInput> = {}): ImportJobDefinition {
  return ImportJobDefinition.parse({
    kind: "import",
    target: { studyId: "study_1" },
    columns: [
      { column: "Email", to: "email", transforms: ["lowercase"] },
      { column: "Name", to: "firstName" },
    ],
    ...extra,
  });
}

/** Email → email, Name → firstName into study_4: the definition the batch-sizing tests send with. */
export const study4Definition = ImportJobDefinition.parse({
  kind: "import",
  target: { studyId: "study_4" },
  columns: [
    { column: "Email", to: "email" },
    { column: "Name", to: "firstName" },
  ],
});

/**
 * A file of `n` people in rows of ~400 bytes, so that it is read on the parse
 * thread as large files are, and its chunks say exactly how far it was read.
 */
export async function paddedPeople(s: Scratch, tag: string, n: number): Promise<string> {
  const pad = "x".repeat(360);
  const lines = ["Email,Name"];
  for (let i = 1; i <= n; i++) lines.push(`${tag}${i}@example.net,Person ${i} ${pad}`);
  return s.file("people.csv", `${lines.join("\n")}\n`);
}

export interface DryRun {
  report: ImportReport;
  /** Rejects CSV parsed, header row included; [] when there was none. */
  rejects: string[][];
  /** People of every request body, in order. */
  people: Record<string, unknown>[];
  bodies: Record<string, unknown>[];
}

export async function dryRun(
  s: Scratch,
  file: string,
  definition: ImportJobDefinition,
  parseInWorker?: boolean,
): Promise<DryRun> {
  const rejectsFile = path.join(s.dir, `${path.basename(file)}.rejects.csv`);
  const requestsFile = path.join(s.dir, `${path.basename(file)}.requests.jsonl`);
  const report = await runImport({
    file,
    definition,
    dryRun: true,
    rejectsFile,
    requestsFile,
    workDir: s.dir,
    ...(parseInWorker === undefined ? {} : { parseInWorker }),
  });
  const rejects = report.rejectsFile
    ? (parse(await readFile(report.rejectsFile), { relax_column_count: true, bom: true }) as string[][])
    : [];
  // A dry run that would send nothing leaves no requests file and reports none.
  const lines = report.requestsFile
    ? (await readFile(report.requestsFile, "utf8")).split("\n").filter(Boolean)
    : [];
  const bodies = lines.map((l) => (JSON.parse(l) as { body: Record<string, unknown> }).body);
  const people = bodies.flatMap((b) => b.people as Record<string, unknown>[]);
  return { report, rejects, people, bodies };
}
