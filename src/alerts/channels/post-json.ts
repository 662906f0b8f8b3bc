import { AlertDeliveryError } from "../../errors/index.ts";

/**
 * POSTs a JSON body and resolves with the status when the receiver took it
 * (2xx). Anything else is an AlertDeliveryError: retryable for a 5xx, a 429,
 * a timeout or a connection that failed; not for another 4xx, which says the
 * request itself is wrong (a bad URL, a refused signature) and would be
 * refused again.
 */
export async function postJson(
  channel: string,
  url: string,
  body: string,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<number> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", "user-agent": "recruit-sync-alerts", ...headers },
      body,
      signal: AbortSignal.timeout(timeoutMs),
      redirect: "error",
    });
  } catch (err) {
    // fetch says "fetch failed"; what happened is in its cause (ECONNREFUSED, ENOTFOUND, "bad port").
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const why =
      (err as Error).name === "TimeoutError"
        ? `no answer within ${timeoutMs} ms`
        : (cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err)));
    throw new AlertDeliveryError(channel, `${channel}: ${hostOf(url)} could not be reached (${why})`, {
      cause: err,
    });
  }
  // The answer's body is not ours to keep (and may be large): read and dropped.
  await response.arrayBuffer().catch(() => undefined);
  if (response.ok) return response.status;
  const retryable = response.status >= 500 || response.status === 429 || response.status === 408;
  throw new AlertDeliveryError(channel, `${channel}: ${hostOf(url)} answered ${response.status}`, {
    retryable,
  });
}

/** Where a URL points, without its path: a Slack webhook's path is its secret. */
export function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return "(invalid URL)";
  }
}
