/**
 * The emulator on its own process for the end-to-end benches: rate limit off,
 * admin API on. Prints `{"baseUrl", "origin", "token"}` as one line once it
 * listens; stops on SIGTERM.
 *   node --import tsx bench/emulator-process.ts
 */
import { startEmulator } from "../src/emulator/index.ts";

const token = "bench-token";
const emulator = await startEmulator({
  port: 0,
  host: "127.0.0.1",
  rateLimit: false,
  admin: true,
  tokens: [token],
});
process.stdout.write(`${JSON.stringify({ baseUrl: emulator.baseUrl, origin: emulator.origin, token })}\n`);
process.once("SIGTERM", () => {
  void emulator.close().then(() => process.exit(0));
});
