import net from "node:net";
import pg from "pg";
import { DATABASE_URL } from "./env.ts";

/** SSLRequest and GSSENCRequest: untyped like the startup message, which follows them. */
const NEGOTIATION_CODES = new Set([80877103, 80877104]);

export interface StatementStall {
  /** `url` (a PostgreSQL URL) pointed at this proxy instead of the server. */
  through(url: string): string;
  /** Resolves once the statement it waits for is reached and the client's bytes from there on are held back. */
  stalled: Promise<void>;
  /**
   * From a connection of its own: `select pg_terminate_backend(pid) from
   * pg_stat_activity where <while>` on the server process of the stalled
   * connection only (found by the proxy's port, so no other test's backend
   * is touched), once `while` holds for it. Resolves with how many backends
   * it ended.
   */
  terminate(): Promise<number>;
  close(): Promise<void>;
}

export interface StallOptions {
  /** The simple-protocol statement (a Query message) to stall at. */
  statement: RegExp;
  /** Its how-manieth occurrence, over every connection through the proxy (1 = the first). */
  nth: number;
  /** "after": the statement reaches the server, what follows is held; "before": the statement too is held. */
  hold: "after" | "before";
  /** The state of the server process to wait for before ending it, as a pg_stat_activity condition. */
  while: string;
}

/** Stalls inside the nth COPY: the server process waits for rows (state active, query COPY …). */
export const MID_COPY = (nth: number): StallOptions => ({
  statement: /^\s*copy\s/i,
  nth,
  hold: "after",
  while: "query ilike 'copy%' and state = 'active'",
});

/** Stalls before the nth COMMIT: everything of the transaction is written, the COMMIT never arrives. */
export const BEFORE_COMMIT = (nth: number): StallOptions => ({
  statement: /^\s*commit\b/i,
  nth,
  hold: "before",
  while: "state = 'idle in transaction'",
});

/**
 * A TCP proxy in front of PostgreSQL that lets the client talk to the server
 * until the `nth` occurrence of a statement, then holds back everything the
 * client sends from there: the server process sits inside that COPY (waiting
 * for rows), or in a transaction whose COMMIT never comes, for as long as
 * the test likes. The test ends it with terminate(), and the client meets a
 * connection lost mid-COPY or mid-commit as it would when a DBA or a
 * failover ends it, every time at the same point.
 */
export async function stallAt(options: StallOptions): Promise<StatementStall> {
  const nth = options.nth;
  const upstream = new URL(DATABASE_URL);
  let seen = 0;
  /** Set on the stalled connection: from then on its client hears a reset only. */
  let endStalled: () => void = () => {};
  let stalledPort: number | undefined;
  let onStalled: () => void = () => {};
  const stalled = new Promise<void>((resolve) => {
    onStalled = resolve;
  });
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const server = net.connect(Number(upstream.port || 5432), upstream.hostname);
    sockets.add(client);
    sockets.add(server);
    let pending = Buffer.alloc(0);
    let started = false;
    let holding = false;
    let ending = false;
    // Once the test ends the server process, the client hears a reset only, not the server's last words:
    // as when the server's host, meeting rows for a closed socket, answers with RST before they are read.
    server.on("data", (d) => {
      if (!ending) client.write(d);
    });
    server.on("close", () => (ending ? client.resetAndDestroy() : client.destroy()));
    client.on("close", () => server.destroy());
    server.on("error", () => client.destroy());
    client.on("error", () => server.destroy());
    client.on("data", (d) => {
      if (holding) return;
      pending = Buffer.concat([pending, d]);
      for (;;) {
        if (!started) {
          if (pending.length < 8) return;
          const len = pending.readUInt32BE(0);
          if (pending.length < len) return;
          if (!NEGOTIATION_CODES.has(pending.readUInt32BE(4))) started = true;
          server.write(pending.subarray(0, len));
          pending = pending.subarray(len);
          continue;
        }
        if (pending.length < 5) return;
        const len = pending.readUInt32BE(1) + 1;
        if (pending.length < len) return;
        const message = pending.subarray(0, len);
        pending = pending.subarray(len);
        const matches =
          message[0] === 0x51 && options.statement.test(message.subarray(5, len - 1).toString("utf8"));
        const stallHere = matches && ++seen === nth;
        if (!stallHere || options.hold === "after") server.write(message);
        if (stallHere) {
          holding = true;
          client.pause();
          stalledPort = server.localPort;
          endStalled = () => {
            ending = true;
          };
          onStalled();
          return;
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    through(url) {
      const u = new URL(url);
      u.hostname = "127.0.0.1";
      u.port = String(port);
      return u.toString();
    },
    stalled,
    async terminate() {
      endStalled();
      const admin = new pg.Client({ connectionString: DATABASE_URL });
      await admin.connect();
      try {
        // The server must have begun the statement (or finished the one before) before it is ended there.
        for (let i = 0; i < 200; i++) {
          const res = await admin.query<{ ended: boolean }>(
            `select pg_terminate_backend(pid) as ended from pg_stat_activity
             where (${options.while}) and client_port = $1`,
            [stalledPort],
          );
          if (res.rows.length > 0) return res.rows.filter((r) => r.ended).length;
          await new Promise((r) => setTimeout(r, 25));
        }
        return 0;
      } finally {
        await admin.end();
      }
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
