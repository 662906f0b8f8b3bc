import type { Command } from "commander";
import { UsageError } from "../../errors/index.ts";

interface RunsFlags {
  job?: string;
  last?: string;
  json?: boolean;
}

/** `recruit-sync runs [--job NAME]`: the run history the console's /runs page shows, read from the same place. */
export function registerRunsCommand(program: Command): void {
  program
    .command("runs")
    .description(
      "the recent runs of each job: status, duration, rows, rejects, time waited on the budget, alerts",
    )
    .option("--job <name>", "only this job's runs")
    .option("--last <n>", "runs shown per job (default 10, at most 100)")
    .option("--json", "the history as JSON (what the console's GET api/run-history answers)")
    .addHelpText(
      "after",
      `
Examples:
  recruit-sync runs                         # every job with runs Redis still keeps
  recruit-sync runs --job nightly-export --last 30
  recruit-sync runs --json | jq '.jobs[].runs[0]'`,
    )
    .action(async (flags: RunsFlags) => {
      const perJob = flags.last === undefined ? 10 : Number(flags.last);
      if (!Number.isInteger(perJob) || perJob < 1 || perJob > 100) {
        throw new UsageError(`--last takes a whole number from 1 to 100, not ${flags.last}`);
      }
      const { loadConfig } = await import("../../config/index.ts");
      const config = loadConfig();
      const { readRunHistory } = await import("../../alerts/index.ts");
      const { asRedis, connectRedis } = await import("../../runtime/index.ts");
      const { openQueues } = await import("../../queue/index.ts");
      const { formatRunHistory } = await import("../run-history-table.ts");
      const redis = await connectRedis(config, "the finished runs are kept there");
      const queues = openQueues(config, redis);
      try {
        const history = await readRunHistory(queues, asRedis(redis), config.redis.prefix, {
          ...(flags.job ? { job: flags.job } : {}),
          perJob,
        });
        process.stdout.write(
          flags.json ? `${JSON.stringify(history, null, 2)}\n` : formatRunHistory(history, flags.job),
        );
      } finally {
        await queues.close().catch(() => {});
        redis.disconnect();
      }
    });
}
