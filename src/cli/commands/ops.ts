import type { Command } from "commander";
import { stopSignal } from "../stop-signal.ts";
import { parsePort } from "./port-flag.ts";

interface OpsFlags {
  port?: string;
  host?: string;
  probePort?: string;
  probeHost?: string;
}

/**
 * `recruit-sync ops`: the dashboard, the ops API, /healthz, /readyz and
 * /metrics on their own, without a worker (any number of workers elsewhere
 * share the Redis). Runs until SIGTERM or SIGINT.
 */
export function registerOpsCommand(program: Command): void {
  program
    .command("ops")
    .description("serve the queue dashboard, the ops API, health checks and Prometheus metrics")
    .option("--port <port>", "listen on this port (default ops.port, 4020; 0 picks a free one)")
    .option("--host <host>", "listen on this address (default ops.host, 127.0.0.1)")
    .option(
      "--probe-port <port>",
      "also serve /healthz, /readyz and /metrics alone, without auth, on this port (default ops.probePort: none)",
    )
    .option("--probe-host <host>", "the probe port's address (default ops.probeHost, else the ops host)")
    .addHelpText(
      "after",
      `
Basic auth is on unless the configuration says ops.auth: false: the user is ops.user
(default "ops"), the password comes from RECRUIT_SYNC_OPS_PASSWORD only.

Examples:
  RECRUIT_SYNC_OPS_PASSWORD=… recruit-sync ops            # http://127.0.0.1:4020/ui/
  RECRUIT_SYNC_OPS_PASSWORD=… recruit-sync ops --host 0.0.0.0 --port 8080
  curl -u ops:$RECRUIT_SYNC_OPS_PASSWORD -X POST http://127.0.0.1:4020/api/jobs/nightly-export/run
  RECRUIT_SYNC_OPS_PASSWORD=… recruit-sync ops --probe-port 4021 --probe-host 0.0.0.0   # probes, Prometheus
  recruit-sync worker --ops                               # worker and dashboard in one process`,
    )
    .action(async (flags: OpsFlags) => {
      const port = parsePort("--port", flags.port);
      const probePort = parsePort("--probe-port", flags.probePort);
      // Configuration, logging, fastify and bull-board load when the command runs, not when the CLI starts.
      const { loadConfig } = await import("../../config/index.ts");
      const { createLogger } = await import("../../logger/index.ts");
      const config = loadConfig();
      const logger = createLogger({ level: config.log.level, name: "ops" });
      // Listened for before the server starts: a SIGTERM then is a stop, not Node's default kill.
      const asked = stopSignal();
      const { startOpsServer } = await import("../../ops/index.ts");
      const ops = await startOpsServer({
        config,
        logger,
        ...(port !== undefined ? { port } : {}),
        ...(flags.host ? { host: flags.host } : {}),
        ...(probePort !== undefined ? { probePort } : {}),
        ...(flags.probeHost ? { probeHost: flags.probeHost } : {}),
      }).catch((err: unknown) => {
        asked.release();
        throw err;
      });
      process.stdout.write(
        `recruit-sync ops: dashboard ${ops.dashboardUrl}${config.ops.auth ? ` (user ${config.ops.user}, password from RECRUIT_SYNC_OPS_PASSWORD)` : " (no auth)"}${ops.probeUrl ? `; probes ${ops.probeUrl}/readyz, ${ops.probeUrl}/metrics (no auth)` : ""}\n`,
      );
      const signal = await asked.signal;
      logger.info({ signal }, "signal received");
      await ops.close();
    });
}
