import type { Command } from "commander";
import { ConfigError, RecruitSyncError } from "../../errors/index.ts";

/** `recruit-sync alerts test`: a sample alert to every channel, and per channel whether it got there. */
export function registerAlertsCommand(program: Command): void {
  const alerts = program
    .command("alerts")
    .description("the alert channels of the configuration (alerts.channels)")
    .addHelpText(
      "after",
      `
Examples:
  recruit-sync alerts test                  # a sample alert to every channel; exit 1 if one did not take it`,
    );

  alerts
    .command("test")
    .description(
      "sends a sample alert to every configured channel and says, for each, whether it was delivered",
    )
    .action(async () => {
      const { loadConfig } = await import("../../config/index.ts");
      const config = loadConfig();
      if (config.alerts.channels.length === 0) {
        throw new ConfigError(
          "no alert channels configured: add alerts.channels (a webhook, slack or email) to config/*.yaml (docs/ops.md, Alerts)",
        );
      }
      const { testChannels } = await import("../../alerts/index.ts");
      const results = await testChannels(config);
      for (const r of results) {
        const name = `${r.kind} ${r.channel}`;
        process.stdout.write(
          r.delivered ? `${name}: delivered (${r.detail})\n` : `${name}: NOT delivered: ${r.detail}\n`,
        );
      }
      const failed = results.filter((r) => !r.delivered);
      if (failed.length > 0) {
        throw new RecruitSyncError(
          "alert_undelivered",
          `${failed.length} of ${results.length} alert channels did not take the test alert: ${failed.map((r) => r.channel).join(", ")}`,
        );
      }
    });
}
