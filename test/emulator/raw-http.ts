import type { TestEmulator } from "../helpers/emulator.ts";

export interface RawResponse {
  status: number;
  headers: Headers;
  text: string;
  contentType: string;
  json<T = unknown>(): T;
}

/** Sends exactly what a test says, for requests the typed client would refuse to send. */
export async function raw(
  emu: TestEmulator,
  method: string,
  path: string,
  options: { body?: unknown; token?: string | null; headers?: Record<string, string> } = {},
): Promise<RawResponse> {
  const headers: Record<string, string> = { ...options.headers };
  const token = options.token === undefined ? emu.token : options.token;
  if (token !== null) headers.authorization = `Bearer ${token}`;
  let body: string | undefined;
  if (options.body !== undefined) {
    body = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
    headers["content-type"] ??= "application/json";
  }
  const res = await fetch(emu.baseUrl + path, { method, headers, body });
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    text,
    contentType: res.headers.get("content-type") ?? "",
    json: <T>() => JSON.parse(text) as T,
  };
}
