/**
 * Import pipeline benchmark: generates a 1,000,000-row, 12-column CRM export
 * and measures, on the same file and in one run, bare csv-parse (`columns:
 * true`) and our pipeline up to finished request bodies (a dry run). Prints
 * rows/s of both, the ratio (goal ≥ 80%) and peak RSS (goal < 250 MB).
 *
 *   npx tsx bench/import-dry-run-bench.ts [rows]   (also the second part of `npm run bench -- import`)
 *
 * Not part of npm test. Figures are in docs/engineering/imports-benchmark.md.
 */

import { once } from "node:events";
import { createReadStream, createWriteStream } from "node:fs";
import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { parse } from "csv-parse";
import { ImportJobDefinition } from "../src/config/import-job.ts";
import { runImport } from "../src/imports/index.ts";

const ROWS = Number(process.argv[2] ?? 1_000_000);
const FIRST = [
  "Ann",
  "Bob",
  "Chloé",
  "Dev",
  "Emma",
  "Farid",
  "Grace",
  "Hiro",
  "Ines",
  "José",
  "Kai",
  "Lena",
  "Mia",
  "Noah",
];
const LAST = [
  "Lee",
  "Müller",
  "O'Brien",
  "Patel",
  "Rossi",
  "Smith",
  "Tanaka",
  "Nguyen",
  "García",
  "Kowalski",
];
const COMPANY = ["Acme, Inc.", "Globex", "Initech", "Umbrella Corp", "Stark Industries", "Wayne Enterprises"];
const TITLE = ["Product Manager", "Engineer", "Designer", "Analyst", "Director of Research", "Nurse"];
const STAGE = ["customer", "lead", "subscriber", "opportunity"];
const CITY = ["Boston", "Seattle", "Austin", "Denver", "Chicago", "Portland"];

/** mulberry32: the same file every run. */
let seed = 42;
const rand = (n: number) => {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return (((t ^ (t >>> 14)) >>> 0) % n) as number;
};
const AREA = [
  201, 202, 206, 212, 213, 214, 303, 305, 312, 404, 415, 503, 512, 602, 617, 646, 702, 713, 718, 720,
];
const pick = <T>(a: readonly T[]): T => a[rand(a.length)] as T;
const q = (v: string) => (/[",\n]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v);
const pad = (n: number, w: number) => String(n).padStart(w, "0");

async function generate(file: string): Promise<void> {
  const out = createWriteStream(file);
  const header =
    "Record ID,First Name,Last Name,Email,Phone Number,Company Name,Job Title,Lifecycle Stage,City,Country,Last Contacted,Create Date\n";
  out.write(header);
  let chunk = "";
  for (let i = 1; i <= ROWS; i++) {
    const first = pick(FIRST);
    const last = pick(LAST);
    // ~1% of rows repeat an earlier person; phones come from 5,000 area-code/exchange pairs.
    const id = i > 100 && rand(100) === 0 ? rand(i - 1) + 1 : i;
    const phone = `(${pick(AREA)}) ${pad(230 + rand(250), 3)}-${pad(rand(10_000), 4)}`;
    const date = `2024-${pad(1 + rand(12), 2)}-${pad(1 + rand(28), 2)} ${pad(rand(24), 2)}:${pad(rand(60), 2)}`;
    chunk += `${i},${q(first)},${q(last)},person${id}@example.com,${phone},${q(pick(COMPANY))},${pick(TITLE)},${pick(STAGE)},${pick(CITY)},United States,${date},2023-01-01 10:00\n`;
    if (chunk.length > 1 << 20) {
      if (!out.write(chunk)) await once(out, "drain");
      chunk = "";
    }
  }
  out.end(chunk);
  await once(out, "close");
}

async function bareParse(file: string): Promise<number> {
  let n = 0;
  const parser = createReadStream(file).pipe(parse({ columns: true }));
  for await (const _record of parser) n++;
  return n;
}

const definition = ImportJobDefinition.parse({
  kind: "import",
  preset: "hubspot",
  phoneCountry: "US",
  target: {
    studyId: "study_1",
    population: {
      column: "Lifecycle Stage",
      values: { customer: "population_1", lead: "population_2" },
      default: null,
    },
  },
  columns: [
    { column: "Record ID", to: { propertyId: "property_2" } },
    { column: "Company Name", to: { name: "Company", propertyType: "STRING" } },
    { column: "Job Title", to: { propertyId: "property_5" } },
    { column: "City", to: { name: "City", propertyType: "STRING" } },
  ],
  ignoreColumns: ["Country", "Create Date"],
  batchSize: 500,
});

async function main(): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), "import-bench-"));
  const file = path.join(dir, "crm-export.csv");
  try {
    let t = performance.now();
    await generate(file);
    const size = (await stat(file)).size;
    console.log(
      `generated ${ROWS.toLocaleString()} rows, ${(size / 1e6).toFixed(0)} MB in ${((performance.now() - t) / 1000).toFixed(1)} s`,
    );

    t = performance.now();
    const parsed = await bareParse(file);
    const bareSecs = (performance.now() - t) / 1000;
    const bare = parsed / bareSecs;
    console.log(
      `csv-parse (columns: true): ${Math.round(bare).toLocaleString()} rows/s (${bareSecs.toFixed(1)} s)`,
    );

    let peak = 0;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage.rss());
    }, 50);
    t = performance.now();
    const report = await runImport({
      file,
      definition,
      dryRun: true,
      rejectsFile: path.join(dir, "rejects.csv"),
      workDir: dir,
    });
    const ourSecs = (performance.now() - t) / 1000;
    clearInterval(sampler);
    peak = Math.max(peak, process.memoryUsage.rss());
    const ours = report.rowsRead / ourSecs;
    console.log(
      `pipeline (dry run, to request bodies): ${Math.round(ours).toLocaleString()} rows/s (${ourSecs.toFixed(1)} s): ` +
        `${report.imported.toLocaleString()} people in ${report.batches} bodies, ${report.duplicates.toLocaleString()} duplicates merged, ${report.rejected.toLocaleString()} rejected`,
    );
    console.log(
      `  phases: hash ${(report.phasesMs.hash / 1000).toFixed(1)} s, read/map/validate ${(report.phasesMs.read / 1000).toFixed(1)} s, merge/batch/bodies ${(report.phasesMs.send / 1000).toFixed(1)} s`,
    );
    const ratio = ours / bare;
    const peakMb = peak / 1024 / 1024;
    const maxRssMb = process.resourceUsage().maxRSS / 1024;
    console.log(
      `ratio: ${(ratio * 100).toFixed(0)}% of bare csv-parse (goal ≥ 80%) ${ratio >= 0.8 ? "ok" : "MISSED"}`,
    );
    console.log(
      `peak RSS during the pipeline: ${peakMb.toFixed(0)} MB; process max RSS: ${maxRssMb.toFixed(0)} MB (goal < 250 MB) ${maxRssMb < 250 ? "ok" : "MISSED"}`,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
