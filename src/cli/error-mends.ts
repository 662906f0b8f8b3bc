/**
 * How to mend each kind of failure, by the error's code (docs/errors.md), for
 * the CLI's one error line. Added only when the message does not already say
 * it: the export's own lines name the variable to check, the client's do not.
 * Keyed by code, not by class, so main loads nothing of the API to print it.
 */
const MENDS: Record<string, { mend: string; saidBy: RegExp }> = {
  unauthorized: {
    mend: "check RECRUIT_SYNC_API_TOKEN (the emulator prints its token when it starts)",
    saidBy: /RECRUIT_SYNC_API_TOKEN/,
  },
  forbidden: { mend: "give the API token that permission, or leave out what needs it", saidBy: /permission/ },
  network_error: {
    mend: "check RECRUIT_SYNC_BASE_URL (or --base-url) and that the service is up",
    saidBy: /RECRUIT_SYNC_BASE_URL/,
  },
  timeout: {
    mend: "check that the service at RECRUIT_SYNC_BASE_URL is up, or raise service.timeoutMs",
    saidBy: /RECRUIT_SYNC_BASE_URL|timeoutMs/,
  },
  rate_limited: {
    mend: "the rate budget is spent: run again after its reset",
    saidBy: /budget|reset/,
  },
  server_error: { mend: "the service failed: try again later", saidBy: /try again/ },
};

/** The message with its mend; an error that is none of ours says how to see more. */
export function withMend(err: unknown, message: string): string {
  const code = (err as { code?: unknown } | undefined)?.code;
  const known = typeof code === "string" ? MENDS[code] : undefined;
  if (known && !known.saidBy.test(message)) return `${message}: ${known.mend}`;
  const ours = typeof code === "string" && code.length > 0;
  if (!ours) return `${message} (an unexpected error: --verbose shows where it came from)`;
  return message;
}
