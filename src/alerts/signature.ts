import { createHmac, timingSafeEqual } from "node:crypto";

/** The header a webhook's signature travels in: `t=<unix seconds>,v1=<hex HMAC-SHA256>`. */
export const SIGNATURE_HEADER = "recruit-sync-signature";

/** How far a receiver should accept a signature's time from its own clock (docs/ops.md). */
export const DEFAULT_TOLERANCE_S = 300;

/** HMAC-SHA256 of `<timestamp>.<body>` with the secret, hex. */
export function signPayload(secret: string, timestamp: number, body: string): string {
  return createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex");
}

/** The header's value for `body` signed at `now`. */
export function signatureHeader(secret: string, body: string, now = Date.now()): string {
  const t = Math.floor(now / 1000);
  return `t=${t},v1=${signPayload(secret, t, body)}`;
}

/**
 * The receiver's check, as docs/ops.md shows it: the body as received (the
 * bytes, not a re-serialized object), a signature made with the secret, and
 * a time within the tolerance, so a captured request cannot be replayed
 * later. A receiver also dedupes on the alert's `id`, since delivery is at
 * least once.
 */
export function verifySignature(
  secret: string,
  header: string | undefined,
  body: string,
  options: { toleranceS?: number; now?: number } = {},
): boolean {
  if (!header) return false;
  const parts = new Map(
    header.split(",").map((p) => {
      const eq = p.indexOf("=");
      return [p.slice(0, eq).trim(), p.slice(eq + 1).trim()] as const;
    }),
  );
  const t = Number(parts.get("t"));
  const given = parts.get("v1") ?? "";
  if (!Number.isInteger(t) || !/^[0-9a-f]{64}$/.test(given)) return false;
  const now = Math.floor((options.now ?? Date.now()) / 1000);
  if (Math.abs(now - t) > (options.toleranceS ?? DEFAULT_TOLERANCE_S)) return false;
  const expected = Buffer.from(signPayload(secret, t, body), "hex");
  return timingSafeEqual(expected, Buffer.from(given, "hex"));
}
