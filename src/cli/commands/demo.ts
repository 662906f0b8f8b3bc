import type { Command } from "commander";
import { UsageError } from "../../errors/index.ts";

interface DemoFlags {
  port?: string;
  opsPort?: string;
  warehouse?: string;
  keepRunning?: boolean;
}

function parsePort(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new UsageError(`${flag} ${value}: give a port number from 0 to 65535`);
  }
  return port;
}

/** `recruit-sync demo`: the embedded default, the three ways in, end to end. */
export function registerDemoCommand(program: Command): void {
  program
    .command("demo")
    .description(
      "emulator, Redis, worker and dashboard in one go: the samples through a watched folder, the nightly export's schedule, an import enqueued by hand; then a summary",
    )
    .option("--port <port>", "emulator port (default: a free one)")
    .option("--ops-port <port>", "dashboard port (default ops.port, 4020, else a free one)")
    .option(
      "--warehouse <url>",
      "duckdb:PATH, postgres://… or file:DIR (default: the config's, ./data/warehouse.duckdb)",
    )
    .option("--keep-running", "keep the emulator, worker and dashboard up after the summary, until Ctrl-C")
    .addHelpText(
      "after",
      `
Redis: REDIS_URL when it answers, else 127.0.0.1:6379, else a throwaway redis-server
from PATH (nothing kept on disk, stopped at the end). data/demo/ is the demo's own
folder (watched folders, reports, rejects, log) and is cleared at each start.

Examples:
  npm run demo
  npm run demo -- --keep-running            # then open the dashboard it prints
  recruit-sync demo --warehouse file:./data/demo-export`,
    )
    .action(async (flags: DemoFlags) => {
      const port = parsePort("--port", flags.port);
      const opsPort = parsePort("--ops-port", flags.opsPort);
      const { runDemoCommand } = await import("../demo/demo-command.ts");
      await runDemoCommand({
        ...(port === undefined ? {} : { port }),
        ...(opsPort === undefined ? {} : { opsPort }),
        ...(flags.warehouse ? { warehouse: flags.warehouse } : {}),
        keepRunning: flags.keepRunning === true,
      });
    });
}
