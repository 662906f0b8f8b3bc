import { sendJson, sendText, startTestServer, type TestServer } from "../helpers/http-server.ts";

export interface FixedWindowOptions {
  limit: number;
  windowMs: number;
  /**
   * `first-request`: a window opens with the first request after the last
   * ended (as the emulator does); `aligned`: windows follow one another on a
   * fixed grid whether or not anyone calls.
   */
  windows?: "first-request" | "aligned";
  /** How X-RateLimit-Reset is written, rounded up to whole seconds. */
  resetUnit?: "delta-seconds" | "epoch-seconds";
  /** Random answer delay up to this many ms, so requests overlap as on a real network. */
  maxLatencyMs?: number;
}

export interface FixedWindowService {
  server: TestServer;
  /** Status of every answer, in the order the service counted the requests. */
  statuses: number[];
  /** The path of every request the service counted, in order. */
  paths: string[];
  /** The window (0 the first) each of those requests was counted in. */
  windowOf: number[];
  /** How many windows have opened. */
  windowsOpened(): number;
  /** When the current window ends (epoch ms). */
  currentResetAt(): number;
  close(): Promise<void>;
}

/** A real HTTP service with one fixed-window quota, answering 429 past it. */
export async function startFixedWindowService(o: FixedWindowOptions): Promise<FixedWindowService> {
  const aligned = o.windows === "aligned";
  const origin = Date.now();
  let windowStart = Number.NEGATIVE_INFINITY;
  let used = 0;
  let opened = 0;
  const statuses: number[] = [];
  const paths: string[] = [];
  const windowOf: number[] = [];
  const currentResetAt = () => windowStart + o.windowMs;
  const server = await startTestServer(async (req, res) => {
    const now = Date.now();
    if (now >= windowStart + o.windowMs) {
      windowStart = aligned ? origin + Math.floor((now - origin) / o.windowMs) * o.windowMs : now;
      used = 0;
      opened++;
    }
    const resetAt = currentResetAt();
    const reset =
      o.resetUnit === "epoch-seconds"
        ? String(Math.ceil(resetAt / 1000))
        : String(Math.max(1, Math.ceil((resetAt - now) / 1000)));
    const allowed = used < o.limit;
    if (allowed) used++;
    statuses.push(allowed ? 200 : 429);
    paths.push(req.url);
    windowOf.push(opened - 1);
    const headers = {
      "x-ratelimit-limit": String(o.limit),
      // A limit lowered mid-window leaves more used than it allows: the header says none left, never a negative.
      "x-ratelimit-remaining": String(Math.max(0, o.limit - used)),
      "x-ratelimit-reset": reset,
    };
    if (o.maxLatencyMs) await new Promise((r) => setTimeout(r, Math.random() * o.maxLatencyMs!));
    if (!allowed) {
      return sendText(res, 429, "Too Many Requests", {
        ...headers,
        "retry-after": String(Math.max(1, Math.ceil((resetAt - now) / 1000))),
      });
    }
    sendJson(
      res,
      200,
      { results: [], total: 0, pageInfo: { hasNextPage: false, hasPreviousPage: false } },
      headers,
    );
  });
  return {
    server,
    statuses,
    paths,
    windowOf,
    windowsOpened: () => opened,
    currentResetAt,
    close: server.close,
  };
}
