import type { Command } from "commander";
import { RecruitSyncError } from "../../errors/index.ts";

interface DemoFlags {
  port?: string;
  warehouse?: string;
  keepRunning?: boolean;
}

/** `recruit-sync demo`: the embedded default, end to end. */
export function registerDemoCommand(program: Command): void {
  program
    .command("demo")
    .description(
      "emulator + Redis + the sample imports + an export into ./data/warehouse.duckdb, then a summary",
    )
    .option("--port <port>", "emulator port (default: a free one)")
    .option("--warehouse <url>", "duckdb:PATH, postgres://… or file:DIR (default: the config's)")
    .option("--keep-running", "leave the emulator up afterwards, until Ctrl-C")
    .addHelpText(
      "after",
      `
Examples:
  recruit-sync demo                         # what 'npm run demo' runs
  recruit-sync demo --keep-running          # then browse what reached the emulator, Ctrl-C to stop
  recruit-sync demo --warehouse postgres://postgres@127.0.0.1:5432/warehouse
  recruit-sync demo --warehouse file:./data/demo-export   # NDJSON and CSV files instead of DuckDB`,
    )
    .action(async (flags: DemoFlags) => {
      const port = flags.port === undefined ? undefined : Number(flags.port);
      if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65_535)) {
        throw new RecruitSyncError("usage", `--port must be a port number, not ${flags.port}`);
      }
      // The emulator, the pipelines and DuckDB load when the demo runs, not when the CLI starts.
      const { runDemo } = await import("../demo/run-demo.ts");
      const abort = new AbortController();
      const onSignal = () => abort.abort(new RecruitSyncError("interrupted", "interrupted by a signal"));
      process.once("SIGINT", onSignal);
      process.once("SIGTERM", onSignal);
      const demo = await runDemo({
        ...(port === undefined ? {} : { port }),
        ...(flags.warehouse ? { warehouse: flags.warehouse } : {}),
        signal: abort.signal,
      });
      const imported = demo.imports.reduce((n, r) => n + ("imported" in r ? r.imported : r.updated), 0);
      const rejected = demo.imports.reduce((n, r) => n + r.rejected, 0);
      const rows = Object.values(demo.exportReport.resources).reduce((n, r) => n + r.rows, 0);
      const lines = [
        "",
        "── demo summary ──",
        `imported   ${imported} people and opt-outs from ${demo.imports.length} sample files; ${rejected} rows rejected (reasons in data/imports/*.rejects.csv)`,
        `exported   ${rows} rows into ${demo.warehouse}`,
        flags.keepRunning
          ? `emulator   ${demo.emulator.origin}/__emulator/snapshot shows what reached the service`
          : "emulator   stopped; 'npm run demo -- --keep-running' keeps it up to browse /__emulator/snapshot",
        "tables     participants, email_messages, incentives, custom_incentives, segments, person_properties, sync_runs",
        "dashboard  the queue dashboard comes with the queue runtime; until then use the CLI (recruit-sync --help)",
      ];
      process.stdout.write(`${lines.join("\n")}\n`);
      if (flags.keepRunning) {
        process.stdout.write(`emulator stays up at ${demo.emulator.baseUrl}; Ctrl-C to stop\n`);
        await new Promise<void>((resolve) =>
          abort.signal.addEventListener("abort", () => resolve(), { once: true }),
        );
      }
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
      await demo.stop();
      if (demo.exportReport.status !== "succeeded") {
        throw new RecruitSyncError("export_failed", `the export ended ${demo.exportReport.status}`);
      }
    });
}
