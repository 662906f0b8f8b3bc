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

function definitionMac(token: string, definition: Record<string, unknown>): string {
  return createHmac("sha256", token)
    .update(`recruit-sync definition ${JSON.stringify(definition)}`)
    .digest("hex");
}

function sameHex(a: string, b: string): boolean {
  const x = Buffer.from(a, "hex");
  const y = Buffer.from(b, "hex");
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * A schedule carries its definition whole (so a typo in jobs/ does not stop
 * it), and a definition carries its sink: one typed by hand on the dashboard
 * could name any warehouse. The worker that schedules it signs it.
 */
export function grantDefinition(
  config: RuntimeConfig,
  definition: Record<string, unknown>,
): string | undefined {
  return config.service.token ? definitionMac(config.service.token, definition) : undefined;
}

/** Throws a ConfigError unless `grant` is the configured token's signature of `definition`. */
export function checkDefinitionGrant(
  config: RuntimeConfig,
  definition: Record<string, unknown>,
  grant: string | undefined,
): void {
  const token = config.service.token;
  if (token && grant && sameHex(grant, definitionMac(token, definition))) return;
  throw new ConfigError(
    "a whole export definition in a job's data runs only as a worker's schedule made it: name a job of jobs/ instead",
    [{ path: "definition", message: "not signed by a worker of this fleet" }],
  );
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
  if (token && override.grant && sameHex(override.grant, mac(token, override.warehouse))) return;
  throw new ConfigError(
    `the warehouse ${wanted} is named by neither the job definition nor the configuration: a job added on the dashboard exports only into those; for another warehouse, use recruit-sync export --warehouse`,
    [{ path: "warehouse", message: "not the definition's sink nor the configured warehouse" }],
  );
}
