import { describe, expect, it } from "vitest";
import { ConfigError, outsideFailure, runFailure } from "../../src/errors/index.ts";
import { createRedisConnection } from "../../src/runtime/index.ts";

describe("failures from outside, as one of our errors", () => {
  it("reads Redis's refusal of a transaction at maxmemory, and never names the URL's password", async () => {
    createRedisConnection("redis://someone:s3cret-pass@127.0.0.1:6399/2").disconnect();
    // A MULTI Redis discarded: its reasons are in previousErrors, as ioredis gives them.
    const discarded = Object.assign(
      new Error("EXECABORT Transaction discarded because of previous errors."),
      {
        previousErrors: [new Error("OOM command not allowed when used memory > 'maxmemory'.")],
      },
    );
    const failure = runFailure(new Error("ledger", { cause: discarded }), { rows: 1 });
    expect(failure.code).toBe("redis_out_of_memory");
    expect(failure.report).toEqual({ rows: 1 });
    expect(failure.message).toContain("Redis at redis://someone:***@127.0.0.1:6399/2 refused a write");
    expect(failure.message).not.toContain("s3cret");
  });

  it("leaves a configuration error alone: Redis not answering at start already says what to do", () => {
    const start = new ConfigError(
      "Redis does not answer at redis://127.0.0.1:1 (x): start redis-server or set REDIS_URL",
      [],
      {
        cause: new Error("Connection is closed."),
      },
    );
    expect(outsideFailure(start)).toBeUndefined();
    expect(outsideFailure(new Error("Connection is closed."))?.code).toBe("redis_unavailable");
  });

  it("names the disk's setting when a write says no file", () => {
    const err = Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
    expect(outsideFailure(err)?.message).toBe(
      "no space left to write a file under paths.dataDir (ENOSPC): free space on that disk, or move it with paths.dataDir in the configuration; a rerun resumes where this one stopped",
    );
  });
});
