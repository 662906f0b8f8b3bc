import { type Command, Option } from "commander";
// Straight from the modules that hold them, not the emulator's index: the help
// text shows these, and the index would load fastify and zod before any command runs.
import {
  DEFAULT_HOST,
  DEFAULT_PORT,
  DEFAULT_SEED,
  DEFAULT_TOKEN,
  EMULATOR_ENV,
} from "../../emulator/defaults.ts";
import { DEFAULT_RATE_LIMIT, RATE_LIMIT_RESET_UNITS } from "../../emulator/rate-limiter.ts";
import type { EmulatorFlags } from "./emulator-flags.ts";

const collect = (value: string, previous: string[]) => [...previous, value];

/** `recruit-sync emulator`: the local service for tests, demos and rehearsing imports. */
export function registerEmulatorCommand(program: Command): void {
  program
    .command("emulator")
    .description(
      "Start the service emulator: the whole public interface on a local port, seeded, with an admin API",
    )
    .option("--port <n>", "port to listen on (0 picks a free one)", String(DEFAULT_PORT))
    .option("--host <host>", "address to listen on", DEFAULT_HOST)
    .option("--seed <n>", "seed of the generated workspace", String(DEFAULT_SEED))
    .option("--people <n>", "people in the workspace (default 500)")
    .option("--studies <n>", "studies, at least 12 (default 12)")
    .option("--participants-per-study <n>", "participants seeded in each study (default 25)")
    .option("--properties <n>", "person properties, at least 8 (default 40)")
    .option("--incentives <n>", "incentives, at least 10 (default 60)")
    .option("--emails <n>", "email messages (default 300)")
    .option("--segments <n>", "segments (default 30)")
    .option("--populations <n>", "populations (default 3)")
    .option(
      "--rate-limit <spec>",
      "requests per window per token, REQUESTS/SECONDSs, or off",
      `${DEFAULT_RATE_LIMIT.requests}/${DEFAULT_RATE_LIMIT.windowSeconds}s`,
    )
    .option(
      "--reset-unit <unit>",
      `unit of X-RateLimit-Reset: ${RATE_LIMIT_RESET_UNITS.join(" or ")}`,
      "delta-seconds",
    )
    .option(
      "--token <TOKEN[:PERM,…]>",
      `an accepted token (repeatable); no list = every permission, "TOKEN:" = none; default ${DEFAULT_TOKEN} on loopback, a random one beyond (env ${EMULATOR_ENV.tokens}, space-separated)`,
      collect,
      [],
    )
    .option("--state <file>", "restore the store from FILE when it exists, save it there on exit")
    .option("--no-admin", "do not serve the /__emulator admin API")
    .option(
      "--admin-token <token>",
      `the admin API's token, required as Authorization: Bearer (env ${EMULATOR_ENV.adminToken}); random and printed when not given`,
    )
    .option(
      "--open-admin",
      "serve the admin API without a token (tests on this machine; refused beyond 127.0.0.0/8, ::1, localhost)",
    )
    .addOption(
      new Option("--require-admin-token", "the default: the admin API always takes its token").hideHelp(),
    )
    .option(
      "--max-seed-memory <MB>",
      "refuse seeds estimated above MB of heap (default 70% of the heap limit)",
    )
    .option("--clock <iso>", "start the emulator's clock at this time")
    .option("--error-rate <share>", "answer this share of requests 500 (0–1)")
    .option("--latency <ms>", "add latency to every request: MS or MIN-MAX")
    .option("--drop-rate <share>", "destroy the connection of this share of requests (0–1)")
    .option("--too-many-requests-rate <share>", "answer this share of requests 429 (0–1)")
    .option("--storm <seconds>", "answer every request 429 for the first SECONDS")
    .option("--slow-body <ms>", "trickle every response body out over MS")
    .option(
      "--drop-people-rate <share>",
      "imports count this share of their people (0–1) but silently never store them; which ones is fixed by --seed",
    )
    .option("--count-offset <n>", "add N (may be negative) to the count every import answers")
    .option(
      "--fault <json>",
      'a per-route fault rule, e.g. \'{"route":"searchEmails","errorRate":0.2}\' (repeatable)',
      collect,
      [],
    )
    .addHelpText(
      "after",
      `
Examples:
  recruit-sync emulator                     # ${DEFAULT_HOST}:${DEFAULT_PORT}, token ${DEFAULT_TOKEN}, ${DEFAULT_RATE_LIMIT.requests}/${DEFAULT_RATE_LIMIT.windowSeconds}s
  recruit-sync emulator --port 0 --people 5000 --rate-limit off
  recruit-sync emulator --rate-limit 100/5s --storm 10    # every request 429 for the first 10 s
  recruit-sync emulator --state ./data/emulator-state.jsonl   # the store survives a restart
  recruit-sync emulator --port 0 --open-admin   # admin API without its token (tests)`,
    )
    .action(async (flags: EmulatorFlags) => {
      // The emulator (fastify, the store, the seed) loads when the command runs, not when the CLI starts.
      const { startEmulator } = await import("../../emulator/index.ts");
      const { emulatorOptionsFromFlags } = await import("./emulator-flags.ts");
      const emulator = await startEmulator(emulatorOptionsFromFlags(flags));
      const out = process.stdout;
      out.write(`Emulator listening: ${emulator.baseUrl}\n`);
      out.write(`  OpenAPI:   ${emulator.origin}/openapi.json\n`);
      if (flags.admin) {
        out.write(
          `  Admin API: ${emulator.origin}/__emulator${emulator.adminToken === undefined ? " (open: --open-admin, loopback only)" : " (Authorization: Bearer <admin token>)"}\n`,
        );
      }
      out.write(
        `  Store:     ${emulator.restoredFromState ? `restored from ${flags.state}` : `seed ${flags.seed}`}, ${emulator.store.people.size} people, ${emulator.store.studies.size} studies\n`,
      );
      for (const t of emulator.tokens) {
        out.write(
          `  Token:     ${t.token} (${t.permissions.length ? t.permissions.join(", ") : "no permissions"})\n`,
        );
      }
      if (emulator.adminToken !== undefined) out.write(`  Admin token: ${emulator.adminToken}\n`);
      out.write("Stop with Ctrl-C.\n");
      await new Promise<void>((resolve) => {
        const stop = () => {
          process.off("SIGINT", stop);
          process.off("SIGTERM", stop);
          resolve();
        };
        process.on("SIGINT", stop);
        process.on("SIGTERM", stop);
      });
      await emulator.close();
      out.write(flags.state ? `Emulator stopped; state saved to ${flags.state}\n` : "Emulator stopped\n");
    });
}
