import { isUtf8 } from "node:buffer";
import fc from "fast-check";
import iconv from "iconv-lite";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { detectEncoding } from "../../src/imports/index.ts";
import { guardUtf8 } from "../../src/imports/text-streams.ts";
import { dryRun, type Scratch, scratch, simpleDefinition } from "./fixtures.ts";

let s: Scratch;
beforeEach(async () => {
  s = await scratch();
});
afterEach(async () => {
  await s.cleanup();
});

const CJK = [
  "Email,Name,城市",
  "zhang.wei@example.cn,张伟,北京市朝阳区建国路八十八号",
  "li.na@example.cn,李娜,上海市浦东新区世纪大道一百号",
  "wang.fang@example.cn,王芳,广州市天河区体育西路二十号",
  "",
].join("\r\n");
/** Mostly CJK: even the email addresses are few against the text. */
const MOSTLY_CJK = [
  "Email,Name,备注",
  "a@x.cn,张伟,这位参与者希望在周末参加访谈，请提前一周通过电话或电子邮件联系并确认具体时间。",
  "b@x.cn,李娜,她对移动应用的可用性研究很感兴趣，之前参加过两次类似的研究，反馈非常详细。",
  "",
].join("\n");
const ASCII = "Email,Name\nann@x.org,Ann\nbob@x.org,Bob\nzoe@x.org,Zoë\n";

function utf16(text: string, order: "le" | "be"): Buffer {
  const le = Buffer.from(text, "utf16le");
  return order === "le" ? le : le.swap16();
}

describe("UTF-16 without a BOM", () => {
  it("is detected in either byte order, whether the text is mostly CJK or mostly ASCII", async () => {
    for (const [name, text] of Object.entries({ CJK, MOSTLY_CJK, ASCII })) {
      for (const order of ["le", "be"] as const) {
        const file = await s.file(`${name}-${order}.csv`, utf16(text, order));
        const { report, people } = await dryRun(s, file, simpleDefinition({ unmapped: "properties" }));
        expect({ name, order, encoding: report.encoding }).toEqual({
          name,
          order,
          encoding: `utf-16${order}`,
        });
        const expected = text
          .split(/\r?\n/)
          .slice(1)
          .filter(Boolean)
          .map((line) => line.split(",")[1]);
        expect(people.map((p) => p.firstName)).toEqual(expected);
      }
    }
  });

  it("is detected on a worker thread too, while random bytes with NULs are still not text", async () => {
    const file = await s.file("worker.csv", utf16(MOSTLY_CJK, "be"));
    const { report, people } = await dryRun(s, file, simpleDefinition({ unmapped: "properties" }), true);
    expect(report.encoding).toBe("utf-16be");
    expect(people.map((p) => p.firstName)).toEqual(["张伟", "李娜"]);

    const bytes = Buffer.alloc(4096);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7919) % 256;
    await expect(detectEncoding(bytes, "auto")).rejects.toThrowError(/not text/);
    // Nor is UTF-16 holding NUL characters.
    const nuls = utf16("Email,Name\na@x.org,\u0000\u0000\u0000\u0000\u0000\n", "le");
    await expect(detectEncoding(nuls, "auto")).rejects.toThrowError(/not text/);
  });
});

describe("U+FFFD", () => {
  for (const worker of [false, true]) {
    it(`is data when a UTF-8 file holds it, while undecodable bytes still reject their rows${worker ? " (worker thread)" : ""}`, async () => {
      // A literal U+FFFD on rows 2 and 5, a corrupt byte on row 3, a character cut by a corrupt byte on row 4.
      const file = await s.file(
        `bad-${worker}.csv`,
        Buffer.concat([
          Buffer.from("Email,Name\nann@x.org,Ann \uFFFD\nbob@x.org,Bo"),
          Buffer.from([0xff]),
          Buffer.from("b\ncy@x.org,C"),
          Buffer.from([0xe2, 0x82]),
          Buffer.from("y\ndee@x.org,\uFFFD\nemre@x.org,Emre Ünal Çelik\n"),
        ]),
      );
      const rejecting = simpleDefinition({ invalidOptionalValues: "reject" });
      const { report, people, rejects } = await dryRun(s, file, rejecting, worker);
      expect(report.encoding).toBe("utf-8");
      expect(people.map((p) => p.firstName)).toEqual(["Ann \uFFFD", "\uFFFD", "Emre Ünal Çelik"]);
      expect(rejects.slice(1).map((r) => [r[0], r[1]])).toEqual([
        ["3", "Name: holds control characters or undecodable bytes (wrong encoding?)"],
        ["4", "Name: holds control characters or undecodable bytes (wrong encoding?)"],
      ]);
    });
  }

  it("is data in UTF-16 too, while a Windows-1252 byte without a character still rejects its row", async () => {
    const wide = await s.file(
      "fffd-16.csv",
      Buffer.from("\ufeffEmail,Name\nann@x.org,Ann \uFFFD\n", "utf16le"),
    );
    expect((await dryRun(s, wide, simpleDefinition())).people.map((p) => p.firstName)).toEqual([
      "Ann \uFFFD",
    ]);

    const bytes = iconv.encode("Email,Name\nann@x.org,Zoë\nbob@x.org,Bob\n", "windows-1252");
    // 0x81 has no character in Windows-1252.
    bytes[bytes.indexOf("Bob") + 1] = 0x81;
    const file = await s.file("cp1252.csv", bytes);
    const rejecting = simpleDefinition({ invalidOptionalValues: "reject" });
    const { report, people, rejects } = await dryRun(s, file, rejecting);
    expect(report.encoding).toBe("windows-1252");
    expect(people.map((p) => p.firstName)).toEqual(["Zoë"]);
    expect(rejects[1]?.[1]).toBe("Name: holds control characters or undecodable bytes (wrong encoding?)");
  });
});

describe("the UTF-8 guard", () => {
  async function guarded(chunks: Uint8Array[]): Promise<Buffer> {
    async function* source() {
      yield* chunks;
    }
    const out: Uint8Array[] = [];
    for await (const b of guardUtf8(source(), isUtf8)) out.push(b);
    return Buffer.concat(out);
  }
  const piece = fc.oneof(
    fc.string({ unit: "binary", maxLength: 6 }).map((t) => Buffer.from(t, "utf8")),
    fc.uint8Array({ maxLength: 4 }).map((a) => Buffer.from(a)),
    fc.constant(Buffer.from("\uFFFD")),
  );

  it("passes valid UTF-8 through, makes the rest valid, and reads the same however the file is cut", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(piece, { maxLength: 30 }), fc.array(fc.nat()), async (pieces, cuts) => {
        const whole = Buffer.concat(pieces);
        const once = await guarded([whole]);
        expect(isUtf8(once)).toBe(true);
        if (isUtf8(whole)) expect(once.equals(whole)).toBe(true);
        // Undecodable bytes become control characters, one each; valid characters stay.
        const text = (b: Uint8Array) =>
          new TextDecoder().decode(b).replaceAll("\u001a", "").replaceAll("\ufffd", "");
        expect(text(once)).toBe(text(whole));
        const at = [...new Set(cuts.map((c) => c % (whole.length + 1)))].sort((a, b) => a - b);
        const chunks = [0, ...at].map((from, i) => whole.subarray(from, at[i] ?? whole.length));
        expect((await guarded(chunks)).equals(once)).toBe(true);
      }),
    );
  });
});
