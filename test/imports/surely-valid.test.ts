import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ImportPerson } from "../../src/api/index.ts";
import { SURELY_VALID } from "../../src/imports/rules/index.ts";

const fields = Object.keys(SURELY_VALID) as (keyof typeof SURELY_VALID)[];

/** Strings near the edges of what the email and date patterns take. */
const edgy = fc
  .array(
    fc.constantFrom(
      "a",
      "Z",
      "0",
      "9",
      ".",
      "@",
      "-",
      "_",
      "+",
      "'",
      " ",
      "é",
      "2024",
      "-02-",
      "29",
      "x.org",
    ),
    {
      maxLength: 12,
    },
  )
  .map((parts) => parts.join(""));
const value = fc.oneof(
  edgy,
  fc.string(),
  fc.constantFrom(
    "a@x.org",
    "a..b@x.org",
    ".a@x.org",
    "a@x.o",
    "2024-02-29",
    "2023-02-29",
    "1900-02-29",
    "2000-02-29",
    "",
  ),
  fc.array(fc.oneof(edgy, fc.constantFrom("a@x.org", "")), { maxLength: 3 }),
  fc.boolean(),
  fc.constant(null),
  fc.integer(),
);

describe("the person check's shortcut", () => {
  it("vouches only for values ImportPerson's own field schemas accept", () => {
    fc.assert(
      fc.property(fc.constantFrom(...fields), value, (field, v) => {
        if (SURELY_VALID[field]?.(v)) expect(ImportPerson.shape[field].safeParse(v).success).toBe(true);
      }),
      { numRuns: 20_000 },
    );
  });

  it("vouches for the common valid values, so the shortcut is taken", () => {
    const person = {
      email: "a@x.org",
      phone: "+14155550132",
      firstName: "Zoë",
      lastName: null,
      isOptedOut: false,
      lastContactDate: "2024-02-29",
      additionalEmails: ["b@x.org"],
      additionalPhones: ["+14155550133"],
    };
    for (const [field, v] of Object.entries(person)) {
      expect(SURELY_VALID[field as keyof typeof SURELY_VALID]?.(v)).toBe(true);
    }
  });
});
