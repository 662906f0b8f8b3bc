import { type ApiClient, type ClientOptions, createClient } from "../../src/api/index.ts";
import {
  type EmulatorOptionsInput,
  type RunningEmulator,
  type Snapshot,
  startEmulator,
} from "../../src/emulator/index.ts";

export interface TestEmulator {
  /** Includes /api/public/v1. */
  baseUrl: string;
  origin: string;
  /** A token with every permission. */
  token: string;
  /** A typed client for `token`, without retries so tests see every answer. */
  client: ApiClient;
  emulator: RunningEmulator;
  /** GET /__emulator/snapshot. */
  snapshot(): Promise<Snapshot>;
  /** GET /__emulator/requests: counts by route (operationId) and status. */
  requests(): Promise<RequestCounts>;
  /** fetch() against /__emulator + path with the admin token, JSON bodies as objects. */
  admin(path: string, init?: { method?: string; body?: unknown }): Promise<Response>;
  /** Another client for the same emulator (another token, retries…). */
  clientFor(options?: Partial<ClientOptions>): ApiClient;
  close(): Promise<void>;
}

export interface RequestCounts {
  total: number;
  byRoute: Record<string, Record<string, number>>;
  byStatus: Record<string, number>;
  counts: { route: string; status: string; count: number }[];
}

export interface TestEmulatorOptions extends EmulatorOptionsInput {
  /** The token `token` and `client` use; added with every permission when not among `tokens`. */
  token?: string;
}

/**
 * Starts an emulator on a free port of 127.0.0.1 with the admin API and a
 * rate limit of 100000/60s unless asked; close it in afterEach/afterAll.
 *
 * @example
 * const emu = await startTestEmulator({ sizes: { people: 50 } });
 * const page = await emu.client.searchParticipants("study_1", { size: 10 });
 * await emu.close();
 */
export async function startTestEmulator(options: TestEmulatorOptions = {}): Promise<TestEmulator> {
  const { token = "test-token", ...rest } = options;
  const tokens = [...(rest.tokens ?? [])];
  const listed = tokens.some((t) => (typeof t === "string" ? t.split(":")[0] === token : t.token === token));
  if (!listed) tokens.unshift(token);
  const emulator = await startEmulator({
    port: 0,
    host: "127.0.0.1",
    admin: true,
    // High enough never to refuse a test, present so every answer carries the X-RateLimit-* headers.
    rateLimit: "100000/60s",
    ...rest,
    tokens,
  });
  const clientFor = (o: Partial<ClientOptions> = {}) =>
    createClient({ baseUrl: emulator.baseUrl, token, retry: { maxAttempts: 1 }, ...o });
  // The admin API is guarded by default: tests go through the guard with the token, as users do.
  const authorization: Record<string, string> =
    emulator.adminToken === undefined ? {} : { authorization: `Bearer ${emulator.adminToken}` };
  const admin = (path: string, init: { method?: string; body?: unknown } = {}) =>
    fetch(`${emulator.origin}/__emulator${path}`, {
      method: init.method ?? (init.body === undefined ? "GET" : "POST"),
      ...(init.body === undefined
        ? { headers: authorization }
        : {
            headers: { ...authorization, "content-type": "application/json" },
            body: JSON.stringify(init.body),
          }),
    });
  const json = async <T>(path: string): Promise<T> => {
    const res = await admin(path);
    if (!res.ok) throw new Error(`admin ${path} answered ${res.status}: ${await res.text()}`);
    return (await res.json()) as T;
  };
  return {
    baseUrl: emulator.baseUrl,
    origin: emulator.origin,
    token,
    client: clientFor(),
    emulator,
    snapshot: () => json<Snapshot>("/snapshot"),
    requests: () => json<RequestCounts>("/requests"),
    admin,
    clientFor,
    close: () => emulator.close(),
  };
}
