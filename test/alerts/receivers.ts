import http from "node:http";
import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";

export interface ReceivedRequest {
  headers: http.IncomingHttpHeaders;
  body: string;
  /** The status this request was answered with. */
  status: number;
}

export interface WebhookReceiver {
  url: string;
  received: ReceivedRequest[];
  /** Requests answered 2xx. */
  delivered(): ReceivedRequest[];
  /**
   * The status of the next answers, one per request; 200 after they run out.
   * 0 holds the request unanswered until its client goes away (then it is
   * recorded with status 0).
   */
  answer(...statuses: number[]): void;
  /** Resolves once `n` requests were answered 2xx. */
  /** Resolves once `n` requests came in, however answered. */
  waitForRequests(n: number, timeoutMs?: number): Promise<void>;
  waitFor(n: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

/** A webhook receiver on 127.0.0.1 that keeps every request and answers as told. */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedRequest[] = [];
  const statuses: number[] = [];
  const listeners = new Set<() => void>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const status = statuses.shift() ?? 200;
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8"), status });
      for (const l of listeners) l();
      if (status === 0) return;
      res.writeHead(status, { "content-type": "text/plain" }).end(status < 300 ? "ok" : "no");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const delivered = () => received.filter((r) => r.status >= 200 && r.status < 300);
  return {
    url: `http://127.0.0.1:${port}/hooks/recruit-sync`,
    received,
    delivered,
    answer: (...s) => statuses.push(...s),
    waitForRequests(n, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (received.length < n) return;
          clearTimeout(timer);
          listeners.delete(check);
          resolve();
        };
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`the receiver got ${received.length} of ${n} requests`));
        }, timeoutMs);
        listeners.add(check);
        check();
      });
    },
    waitFor(n, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (delivered().length < n) return;
          clearTimeout(timer);
          listeners.delete(check);
          resolve(delivered());
        };
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`the receiver got ${delivered().length} of ${n} alerts`));
        }, timeoutMs);
        listeners.add(check);
        check();
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface SmtpReceiver {
  port: number;
  messages: Array<{ from: string; to: string[]; raw: string; user: string | undefined }>;
  waitFor(n: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** An SMTP server on 127.0.0.1 (smtp-server) that keeps every message; accepts user `alerts` / `smtp-secret`. */
export async function startSmtpReceiver(): Promise<SmtpReceiver> {
  const messages: SmtpReceiver["messages"] = [];
  const listeners = new Set<() => void>();
  const server = new SMTPServer({
    secure: false,
    disabledCommands: ["STARTTLS"],
    authOptional: true,
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === "alerts" && auth.password === "smtp-secret") callback(null, { user: "alerts" });
      else callback(new Error("Invalid username or password"));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        messages.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString("utf8"),
          user: typeof session.user === "string" ? session.user : undefined,
        });
        callback();
        for (const l of listeners) l();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const port = (server.server.address() as AddressInfo).port;
  return {
    port,
    messages,
    waitFor(n, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (messages.length < n) return;
          clearTimeout(timer);
          listeners.delete(check);
          resolve();
        };
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`the SMTP server got ${messages.length} of ${n} messages`));
        }, timeoutMs);
        listeners.add(check);
        check();
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * A message as its reader sees it: headers unfolded, the body's
 * quoted-printable decoded (a soft line break could otherwise split a
 * value a test looks for).
 */
export function readMail(raw: string): { headers: string; body: string } {
  const split = raw.search(/\r?\n\r?\n/);
  const headers = raw.slice(0, split).replace(/\r?\n[ \t]+/g, " ");
  const encoded = raw.slice(split).trim();
  const quoted = /^content-transfer-encoding:\s*quoted-printable/im.test(headers);
  const body = quoted
    ? Buffer.from(
        encoded
          .replace(/=\r?\n/g, "")
          .replace(/=([0-9A-F]{2})/gi, (_m, h: string) => String.fromCharCode(Number.parseInt(h, 16))),
        "latin1",
      ).toString("utf8")
    : encoded;
  return { headers, body };
}
