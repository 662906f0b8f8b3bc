import { createHmac, timingSafeEqual } from "node:crypto";
import type { RuntimeConfig } from "../config/index.ts";
import { ConfigError } from "../errors/index.ts";
import { warehouseIdentity } from "../sinks/warehouse-identity.ts";

/**
 * A queued export may write where its definition or the configuration says,
 * and elsewhere only when whoever enqueued it holds the API token (the CLI,
 * whose user could run the export inline anyway): it signs the warehouse with
 * the token. A job added by hand on the dashboard carries no such grant, so
 * the ops password alone cannot send every participant's email and phone to
 * a folder or a database of its choosing.
 */
function mac(token: string, warehouse: string): string {
  return createHmac("sha256", token)
    .update(`recruit-sync warehouse ${warehouseIdentity(warehouse).key}`)
    .digest("hex");
}

/** The grant enqueueExport puts beside a warehouse override; undefined without a token. */
export function grantWarehouse(config: RuntimeConfig, warehouse: string): string | undefined {
  return config.service.token ? mac(config.service.token, warehouse) : undefined;
}

/**
 * Throws a ConfigError when a queued job's warehouse override is named by
 * neither the definition nor the configuration and carries no valid grant.
 */
export function checkWarehouseOverride(
  config: RuntimeConfig,
  override: { warehouse: string; grant?: string | undefined },
  named: readonly (string | undefined)[],
): void {
  const wanted = warehouseIdentity(override.warehouse).key;
  if (named.some((url) => url !== undefined && warehouseIdentity(url).key === wanted)) return;
  const token = config.service.token;
  if (token && override.grant) {
    const expected = Buffer.from(mac(token, override.warehouse), "hex");
    const given = Buffer.from(override.grant, "hex");
    if (given.length === expected.length && timingSafeEqual(given, expected)) return;
  }
  throw new ConfigError(
    `the warehouse ${wanted} is named by neither the job definition nor the configuration: a job added on the dashboard exports only into those; for another warehouse, use recruit-sync export --warehouse`,
    [{ path: "warehouse", message: "not the definition's sink nor the configured warehouse" }],
  );
}
