import type { Command } from "commander";
import { UsageError } from "../../errors/index.ts";
import { collect } from "../repeatable.ts";
import { commandLogger } from "../verbosity.ts";

interface ForgetFlags {
  file?: string;
  optOut?: boolean;
  warehouse: string[];
  json?: boolean;
}

/**
 * `recruit-sync forget EMAIL_OR_PHONE... [--file F] [--opt-out]`: removes
 * people from the warehouse, the change-only state and the data folder, and
 * writes a receipt (docs/security.md, "Forgetting a person").
 */
export function registerForgetCommand(program: Command): void {
  program
    .command("forget")
    .description(
      "remove people (by email or phone) from the warehouse, Redis and the data folder, with a receipt",
    )
    .argument("[identifiers...]", "emails or phone numbers")
    .option("--file <file>", "a file of emails and phone numbers, one a line")
    .option("--opt-out", "also opt them out in the service")
    .option("--warehouse <url>", "another warehouse to remove them from (repeatable)", collect, [])
    .option("--json", "print the receipt as JSON")
    .addHelpText(
      "after",
      `
The receipt (data folder, forget-receipts/, 0600) lists each place and what was removed,
with a SHA-256 of each identifier instead of the identifier.

Examples:
  recruit-sync forget ada@example.org +14155550100
  recruit-sync forget --file erasure-requests.txt --opt-out`,
    )
    .action(async (identifiers: string[], flags: ForgetFlags) => {
      const { loadConfig } = await import("../../config/index.ts");
      const { forgetPeople, formatForgetSummary, readIdentifierFile } = await import("../../forget/index.ts");
      const { connectRedis } = await import("../../runtime/redis-connection.ts");
      const all = [...identifiers, ...(flags.file ? await readIdentifierFile(flags.file) : [])];
      if (all.length === 0)
        throw new UsageError("forget: give an email or phone number, or --file with one a line");
      const config = loadConfig();
      const redis = await connectRedis(config, "the change-only state and the unverified marks are there");
      let service: { client: import("../../api/index.ts").ApiClient; close(): Promise<void> } | undefined;
      try {
        if (flags.optOut) {
          const { createServiceClient } = await import("../../runtime/service-client.ts");
          service = await createServiceClient(config, { redis });
        }
        const receipt = await forgetPeople({
          config,
          identifiers: all,
          warehouses: flags.warehouse,
          redis,
          optOutClient: service?.client,
          logger: commandLogger("forget"),
        });
        process.stdout.write(
          `${flags.json ? JSON.stringify(receipt, null, 2) : formatForgetSummary(receipt)}\n`,
        );
      } finally {
        await service?.close();
        redis.disconnect();
      }
    });
}
