import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { isIP } from "node:net";
import type { FastifyReply, FastifyRequest } from "fastify";

/**
 * Whether a listen address only accepts connections from this machine:
 * 127.0.0.0/8, ::1 (also written out or IPv4-mapped) and `localhost`.
 * Anything else — 0.0.0.0, ::, a LAN address, a host name — reaches further.
 */
export function isLoopbackHost(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, "$1")
    .replace(/\.$/, "");
  if (h === "localhost") return true;
  const family = isIP(h);
  if (family === 4) return h.startsWith("127.");
  if (family === 6) {
    const mapped = /^(?:0{0,4}:){0,5}:?ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(h);
    if (mapped?.[1]) return mapped[1].startsWith("127.");
    return /^(?:0{0,4}:){2,7}0{0,3}1$/.test(h) || h === "::1";
  }
  return false;
}

/**
 * The admin API can replace the store and read every person unmasked, and
 * another account on the same host can reach loopback too, so it takes its
 * own token unless the caller opened it (`openAdmin`, for tests) on loopback.
 * A token given is always required; beyond loopback it is never open.
 */
export function adminTokenRequired(options: {
  host: string;
  adminToken?: string | undefined;
  openAdmin?: boolean | undefined;
}): boolean {
  return options.openAdmin !== true || options.adminToken !== undefined || !isLoopbackHost(options.host);
}

/** A token nobody can guess: 24 random bytes, base64url (32 characters). */
export function randomToken(prefix: string): string {
  return `${prefix}${randomBytes(24).toString("base64url")}`;
}

const digest = (text: string) => createHash("sha256").update(text).digest();

/**
 * A Fastify onRequest hook answering 401 JSON unless the request carries
 * `Authorization: Bearer <admin token>`. Digests are compared in constant
 * time so the answer's timing says nothing about how much of a guess matched.
 */
export function adminGuard(token: string): (req: FastifyRequest, reply: FastifyReply) => Promise<void> {
  const expected = digest(token);
  return async (req, reply) => {
    const m = /^Bearer\s+(.+)$/i.exec(req.headers.authorization?.trim() ?? "");
    const given = m?.[1]?.trim();
    if (given !== undefined && timingSafeEqual(digest(given), expected)) return;
    await reply
      .code(401)
      .header("www-authenticate", 'Bearer realm="recruit-sync emulator admin"')
      .send({
        errors: [
          {
            message:
              given === undefined
                ? "The admin API needs the emulator's admin token: send Authorization: Bearer <admin token> (printed when the emulator starts)"
                : "The admin token is wrong: use the one printed when the emulator started",
            path: [],
          },
        ],
      });
  };
}
