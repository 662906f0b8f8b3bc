/**
 * Exports of 800,000 participants without a rate limit, end to end:
 * `recruit-sync export --inline` (the bin, its own process) against the
 * emulator in another process, into DuckDB, PostgreSQL and files. Prints
 * rows/s and the CLI process's peak RSS for each, beside a bare baseline run
 * in the same bench: a plain script paging the same emulator with fetch and
 * writing through the database's own bulk path (bench/helpers/bare-export.ts).
 * Goals (issue 11): DuckDB ≤ 400 MB peak RSS; PostgreSQL and files flat.
 *
 *   npm run bench -- export
 *   npx tsx bench/export-bench.ts --rows 200000 --only duckdb --rounds 2
 *   BENCH_CLI_NODE_OPTIONS=--max-old-space-size=150 npx tsx bench/export-bench.ts --only duckdb
 *     (NODE_OPTIONS for the CLI process alone: the emulator needs its default heap)
 *
 * PostgreSQL: DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test),
 * a schema of its own, dropped at the end. Redis at REDIS_URL (the CLI shares
 * its rate budget there; there is no limit to share here).
 */
import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";
import { z } from "zod";
import {
  cleanEnv,
  runCliExport,
  runMeasured,
  startEmulatorProcess,
  writeProject,
} from "./helpers/cli-run.ts";

const { values: args } = parseArgs({
  options: {
    rows: { type: "string", default: "800000" },
    only: { type: "string", multiple: true },
    rounds: { type: "string", default: "2" },
  },
});
const ROWS = Number(args.rows);
const ROUNDS = Math.max(1, Number(args.rounds));
const KINDS = (["duckdb", "postgres", "file"] as const).filter((k) => !args.only || args.only.includes(k));
const DATABASE_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const STUDY = "study_export";
const here = path.dirname(new URL(import.meta.url).pathname);
const BareResult = z.object({ rows: z.number(), seconds: z.number() });

interface Side {
  rowsPerS: number;
  peakRssMb: number;
}

async function withSchema<T>(work: (url: string) => Promise<T>): Promise<T> {
  const schema = `bench_${randomUUID().replaceAll("-", "")}`;
  const admin = new pg.Client({ connectionString: DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA "${schema}"`);
  const url = new URL(DATABASE_URL);
  url.searchParams.set("options", `-c search_path=${schema}`);
  try {
    return await work(url.toString());
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
  }
}

const root = await mkdtemp(path.join(tmpdir(), "export-bench-"));
const emu = await startEmulatorProcess(STUDY, ROWS);
try {
  console.log(
    `export: ${ROWS.toLocaleString("en")} participants, recruit-sync export --inline against the emulator ` +
      `in its own process (no rate limit), best of ${ROUNDS} alternated rounds`,
  );
  for (const kind of KINDS) {
    let ours: Side | undefined;
    let bare: Side | undefined;
    for (let round = 0; round < ROUNDS; round++) {
      const dir = path.join(root, randomUUID());
      await writeProject(dir, {
        baseUrl: emu.baseUrl,
        prefix: `bench-export-${randomUUID()}`,
        job: {
          big: ["kind: export", "resources: [participants]", `studies: [${STUDY}]`, "pageSize: 100", ""].join(
            "\n",
          ),
        },
      });
      const run = async (warehouse: string, bareTarget: string) => {
        const o = await runCliExport(dir, ["--job", "big", "--warehouse", warehouse]);
        const r = o.report.resources.participants;
        if (r?.status !== "succeeded" || r.rows !== ROWS)
          throw new Error(`export: ${r?.status} ${r?.rows} rows ${r?.error ?? ""}`);
        const side: Side = { rowsPerS: ROWS / (o.report.durationMs / 1000), peakRssMb: o.peakRssMb };
        const b = await runMeasured(
          [
            "--import",
            "tsx",
            path.join(here, "helpers", "bare-export.ts"),
            "--base-url",
            emu.baseUrl,
            "--study",
            STUDY,
            "--kind",
            kind,
            "--target",
            bareTarget,
          ],
          path.resolve(here, ".."),
          cleanEnv(),
        );
        const res = BareResult.parse(JSON.parse(b.stdout.trim().split("\n").at(-1) ?? "{}"));
        if (res.rows !== ROWS) throw new Error(`bare export wrote ${res.rows} rows`);
        const bareSide: Side = { rowsPerS: ROWS / res.seconds, peakRssMb: b.peakRssMb };
        console.log(
          `  ${kind} round ${round + 1}: ours ${Math.round(side.rowsPerS).toLocaleString("en")} rows/s, ${side.peakRssMb.toFixed(0)} MB` +
            ` (process ${o.wallS.toFixed(1)} s); bare ${Math.round(bareSide.rowsPerS).toLocaleString("en")} rows/s, ${bareSide.peakRssMb.toFixed(0)} MB`,
        );
        return [side, bareSide] as const;
      };
      try {
        const [side, bareSide] =
          kind === "duckdb"
            ? await run(`duckdb:${dir}/w.duckdb`, `${dir}/bare.duckdb`)
            : kind === "postgres"
              ? await withSchema((url) => run(url, url))
              : await run(`file:${dir}/out`, `${dir}/bare.csv`);
        if (!ours || side.rowsPerS > ours.rowsPerS)
          ours = { rowsPerS: side.rowsPerS, peakRssMb: Math.max(side.peakRssMb, ours?.peakRssMb ?? 0) };
        else ours.peakRssMb = Math.max(ours.peakRssMb, side.peakRssMb);
        if (!bare || bareSide.rowsPerS > bare.rowsPerS)
          bare = {
            rowsPerS: bareSide.rowsPerS,
            peakRssMb: Math.max(bareSide.peakRssMb, bare?.peakRssMb ?? 0),
          };
        else bare.peakRssMb = Math.max(bare.peakRssMb, bareSide.peakRssMb);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    }
    if (!ours || !bare) throw new Error("no rounds ran");
    const rssGoal = kind === "duckdb" ? ours.peakRssMb <= 400 : undefined;
    console.log(
      `${kind.padEnd(8)} ours ${Math.round(ours.rowsPerS).toLocaleString("en").padStart(7)} rows/s, peak RSS ${ours.peakRssMb.toFixed(0)} MB` +
        `   bare ${Math.round(bare.rowsPerS).toLocaleString("en").padStart(7)} rows/s, peak RSS ${bare.peakRssMb.toFixed(0)} MB` +
        `   speed ${((ours.rowsPerS / bare.rowsPerS) * 100).toFixed(0)}% of bare` +
        (rssGoal === undefined ? "" : `   (goal ≤ 400 MB: ${rssGoal ? "met" : "MISSED"})`),
    );
  }
} finally {
  await emu.stop();
  await rm(root, { recursive: true, force: true });
}
