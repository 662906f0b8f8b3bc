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

/** Operations whose contract has no 404: their path always exists on the service. */
function pathAlwaysExists(operationId: OperationId): boolean {
  const statuses: readonly number[] = endpoints[operationId].errorStatuses;
  return !statuses.includes(404);
}

/**
 * An `onResponse` hook for the client: a 404 from an operation that the
 * contract says never answers 404 means the base URL does not lead to the
 * service (another host, a proxy's wrong path), so the call fails with a
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
