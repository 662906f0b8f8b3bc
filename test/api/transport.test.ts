import { spawn } from "node:child_process";
import { once } from "node:events";
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import { createServer as createTcpServer, type Socket } from "node:net";
import path from "node:path";
import { brotliCompressSync, gzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { requestNeverSent } from "../../src/api/retry-policy.ts";
import { CONNECT_TIMEOUT_CODE, createNodeTransport, type TransportRequest } from "../../src/api/transport.ts";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

interface Seen {
  method: string;
  headers: IncomingMessage["headers"];
  body: string;
  remotePort: number | undefined;
}

/** An HTTP server on loopback whose handler answers each request; records what arrived. */
async function serve(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ url: string; seen: Seen[]; server: Server }> {
  const seen: Seen[] = [];
  const server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      seen.push({
        method: req.method ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
        remotePort: req.socket.remotePort,
      });
      handler(req, res);
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  closers.push(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("not listening on TCP");
  return { url: `http://127.0.0.1:${address.port}/x`, seen, server };
}

function get(signal: AbortSignal = new AbortController().signal): TransportRequest {
  return { method: "GET", headers: { accept: "application/json" }, body: undefined, signal };
}

describe("the node:http transport", () => {
  it("sends the body with its length in bytes and keeps one connection for request after request", async () => {
    const { url, seen } = await serve((_req, res) => res.end("{}"));
    const send = createNodeTransport();
    for (const body of ['{"name":"Zoë"}', '{"name":"Åsa Öberg"}', '{"n":1}']) {
      const res = await send(new URL(url), {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
        signal: new AbortController().signal,
      });
      expect(res.status).toBe(200);
      expect(await res.text()).toBe("{}");
    }
    expect(seen.map((s) => s.body)).toEqual(['{"name":"Zoë"}', '{"name":"Åsa Öberg"}', '{"n":1}']);
    expect(seen.map((s) => s.headers["content-length"])).toEqual(["15", "22", "7"]);
    expect(seen[0]!.headers["content-type"]).toBe("application/json");
    expect(new Set(seen.map((s) => s.remotePort)).size).toBe(1);
  });

  it("waits for an answer slower than the keep-alive idle time: that time only closes free sockets", async () => {
    const { url, seen } = await serve((_req, res) => setTimeout(() => res.end('{"slow":true}'), 300));
    const send = createNodeTransport({ keepAliveIdleMs: 100 });
    const res = await send(new URL(url), get());
    expect(await res.text()).toBe('{"slow":true}');
    // Idle past that time, the socket is closed and the next request opens another.
    await new Promise((resolve) => setTimeout(resolve, 300));
    await (await send(new URL(url), get())).text();
    expect(new Set(seen.map((s) => s.remotePort)).size).toBe(2);
  });

  it("reads a large body that arrives in many chunks, a character split between two, as UTF-8 once", async () => {
    const text = JSON.stringify({ results: Array.from({ length: 20_000 }, (_, i) => `Zoë ${i} – ✓`) });
    const bytes = Buffer.from(text, "utf8");
    const { url } = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      // Cut inside "ë" (two bytes) so one chunk ends with half of it.
      const cut = bytes.indexOf(Buffer.from("ë")) + 1;
      res.write(bytes.subarray(0, cut));
      setTimeout(() => res.end(bytes.subarray(cut)), 20);
    });
    const res = await createNodeTransport()(new URL(url), get());
    expect(await res.text()).toBe(text);
  });

  it("drops a leading byte-order mark as fetch's text() does", async () => {
    const { url } = await serve((_req, res) => res.end(Buffer.from('\uFEFF{"a":1}', "utf8")));
    const res = await createNodeTransport()(new URL(url), get());
    expect(await res.text()).toBe('{"a":1}');
  });

  it.each([
    ["gzip", gzipSync],
    ["br", brotliCompressSync],
  ] as const)("asks for compression as fetch did and reads a %s body", async (encoding, compress) => {
    const text = JSON.stringify({ results: Array.from({ length: 1000 }, (_, i) => ({ id: `p_${i}` })) });
    const { url, seen } = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-encoding": encoding });
      res.end(compress(Buffer.from(text)));
    });
    const res = await createNodeTransport()(new URL(url), get());
    expect(await res.text()).toBe(text);
    expect(seen[0]!.headers["accept-encoding"]).toBe("gzip, deflate");
  });

  it("reads headers by any case, a repeated one joined as Headers.get joins it", async () => {
    const { url } = await serve((_req, res) => {
      res.setHeader("X-RateLimit-Remaining", "7");
      res.setHeader("Set-Cookie", ["a=1", "b=2"]);
      res.end("{}");
    });
    const res = await createNodeTransport()(new URL(url), get());
    expect(res.headers.get("x-ratelimit-remaining")).toBe("7");
    expect(res.headers.get("X-RateLimit-Remaining")).toBe("7");
    expect(res.headers.get("set-cookie")).toBe("a=1, b=2");
    expect(res.headers.get("retry-after")).toBeNull();
    await res.text();
  });

  it("rejects with the signal's reason when aborted before the answer, and closes the connection", async () => {
    let closed = false;
    const { url } = await serve((req) => req.socket.on("close", () => (closed = true)));
    const ac = new AbortController();
    const pending = createNodeTransport()(new URL(url), get(ac.signal));
    setTimeout(() => ac.abort(new DOMException("late", "TimeoutError")), 50);
    await expect(pending).rejects.toMatchObject({ name: "TimeoutError", message: "late" });
    await expect.poll(() => closed).toBe(true);
  });

  it("rejects the body with the signal's reason when aborted halfway through it", async () => {
    const { url } = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"results":[');
    });
    const ac = new AbortController();
    const res = await createNodeTransport()(new URL(url), get(ac.signal));
    const reason = new Error("shutting down");
    setTimeout(() => ac.abort(reason), 20);
    await expect(res.text()).rejects.toBe(reason);
  });

  it("rejects at once when the signal is already aborted, sending nothing", async () => {
    const { url, seen } = await serve((_req, res) => res.end("{}"));
    const reason = new Error("stopped");
    await expect(createNodeTransport()(new URL(url), get(AbortSignal.abort(reason)))).rejects.toBe(reason);
    expect(seen).toHaveLength(0);
  });

  it("fails the body when the server drops the connection halfway", async () => {
    const { url } = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-length": "1000" });
      res.write('{"results":[');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const res = await createNodeTransport()(new URL(url), get());
    const err = await res.text().catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "ECONNRESET" });
    expect(requestNeverSent(err)).toBe(false);
  });

  it("reports a refused connection with ECONNREFUSED, which counts as never sent", async () => {
    const { url, server } = await serve(() => {});
    await new Promise((resolve) => server.close(resolve));
    const err = await createNodeTransport()(new URL(url), get()).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "ECONNREFUSED" });
    expect(requestNeverSent(err)).toBe(true);
  });

  it("gives up on a TLS connection whose handshake never ends, as never sent", async () => {
    const sockets: Socket[] = [];
    const silent = createTcpServer((socket) => sockets.push(socket));
    silent.listen(0, "127.0.0.1");
    await once(silent, "listening");
    closers.push(async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => silent.close(resolve));
    });
    const address = silent.address();
    if (address === null || typeof address === "string") throw new Error("not listening on TCP");
    const send = createNodeTransport({ connectTimeoutMs: 100 });
    const started = Date.now();
    const err = await send(new URL(`https://127.0.0.1:${address.port}/x`), get()).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: CONNECT_TIMEOUT_CODE });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(requestNeverSent(err)).toBe(true);
  });

  it("leaves no kept-alive socket holding the process open after its last answer", async () => {
    const { url } = await serve((_req, res) => res.end("{}"));
    const child = spawn(
      process.execPath,
      ["--import", "tsx", path.join(import.meta.dirname, "transport-child.ts"), url],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    let answeredAt: number | undefined;
    child.stdout.on("data", (chunk: Buffer) => {
      if (chunk.toString().includes("answered")) answeredAt ??= Date.now();
    });
    const [code] = (await once(child, "exit")) as [number | null];
    expect(code).toBe(0);
    expect(answeredAt).toBeDefined();
    // The agent would keep the idle socket 4 s; the server 60 s.
    expect(Date.now() - answeredAt!).toBeLessThan(1_500);
  });
});
