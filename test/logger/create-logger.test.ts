import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger, maskEmail } from "../../src/logger/index.ts";

function capture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(chunk.toString());
      cb();
    },
  });
  return { lines, destination };
}

describe("the logger", () => {
  it("never writes tokens, emails or phones", () => {
    const { lines, destination } = capture();
    const log = createLogger({ level: "info", destination });
    log.info(
      {
        token: "sekrit",
        headers: { authorization: "Bearer sekrit" },
        person: { email: "ann@example.com", phone: "+4479" },
      },
      "call",
    );
    log.info({ email: "bob@example.com", people: [{ email: "c@example.com" }] }, "batch");
    const text = lines.join("");
    expect(text).not.toMatch(/sekrit|ann@example|bob@example|c@example|\+4479/);
    expect(text).toContain("[redacted]");
  });

  it("masks an email for reports", () => {
    expect(maskEmail("ann.lee@example.com")).toBe("a***@example.com");
    expect(maskEmail("broken")).toBe("***");
  });
});
