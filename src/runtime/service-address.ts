import { endpoints, type OperationId, type ResponseContext } from "../api/index.ts";
import { ConfigError, ServiceAddressError } from "../errors/index.ts";

/**
 * The path every base URL of the service ends with (spec §1: `{base_url}`
 * already includes the version prefix). Without it every call reaches a path
 * the service does not have, and the answer — 404 "Not Found" — reads as a
 * missing study or person.
 */
export const SERVICE_PATH_PREFIX = "/api/public/v1";

/**
 * A ConfigError when the base URL does not end with /api/public/v1: the
 * mistake is certain before any request is sent, so nothing is spent on it.
 */
export function checkServiceBaseUrl(baseUrl: string): void {
  let pathname: string;
  try {
    pathname = new URL(baseUrl).pathname.replace(/\/+$/, "");
  } catch {
    throw new ConfigError(`the service's base URL ${JSON.stringify(baseUrl)} is not a URL`);
  }
  if (pathname.endsWith(SERVICE_PATH_PREFIX)) return;
  const suggestion = `${baseUrl.replace(/\/+$/, "")}${SERVICE_PATH_PREFIX}`;
  throw new ConfigError(
    `the service's base URL ${baseUrl} lacks ${SERVICE_PATH_PREFIX}: set RECRUIT_SYNC_BASE_URL (or service.baseUrl, or --base-url) to ${suggestion}`,
  );
}

/**
 * Operations that can answer 404 only when the address is wrong: their
 * contract lists no 404, and neither their path nor their body names a record
 * (spec §7 allows a 404 for any addressed record, e.g. searchEmails' studyId).
 */
function pathAlwaysExists(operationId: OperationId): boolean {
  const ep = endpoints[operationId];
  const statuses: readonly number[] = ep.errorStatuses;
  if (statuses.includes(404) || ep.path.includes("{")) return false;
  const shape = (ep.body as { shape?: Record<string, unknown> }).shape;
  return !Object.keys(shape ?? {}).some((key) => /Ids?$/.test(key));
}

/**
 * An `onResponse` hook for the client: a 404 from an operation that
 * addresses no record and whose contract lists no 404 (searchSegments) means
 * the base URL does not lead to the service (another host, a proxy's wrong path), so the call fails with a
 * ServiceAddressError that says so instead of "Resource not found". `next` is the
 * hook it wraps (the rate governor's), called first so the budget still
 * sees every response.
 */
export function serviceAddressCheck(
  baseUrl: string,
  next?: (ctx: ResponseContext) => void | Promise<void>,
): (ctx: ResponseContext) => Promise<void> {
  return async (ctx) => {
    await next?.(ctx);
    if (ctx.status !== 404 || !pathAlwaysExists(ctx.operationId)) return;
    throw new ServiceAddressError(
      `the service at ${baseUrl} answered 404 to ${ctx.operationId} (${endpoints[ctx.operationId].method} ${endpoints[ctx.operationId].path}), a path the service always has: RECRUIT_SYNC_BASE_URL does not lead to the service's ${SERVICE_PATH_PREFIX}`,
    );
  };
}
