import { describe, expect, it } from "vitest";
import {
  changeCase,
  compileTransforms,
  isFailure,
  split,
  toBoolean,
  toE164,
  toIsoDate,
  trim,
} from "../../src/imports/index.ts";
import { daysIn } from "../../src/imports/rules/transforms/date.ts";

describe("trim and case", () => {
  it("trims text and every item of a list", () => {
    expect(trim("  ann  ")).toBe("ann");
    expect(trim([" a ", "b "])).toEqual(["a", "b"]);
  });

  it("lower-cases, upper-cases and title-cases, keeping O'Brien and Smith-Jones", () => {
    expect(changeCase("lower")("ANN@Example.ORG")).toBe("ann@example.org");
    expect(changeCase("upper")("gb")).toBe("GB");
    expect(changeCase("title")("seán o'brien-SMITH")).toBe("Seán O'Brien-Smith");
  });
});

describe("date", () => {
  it("turns each listed format into YYYY-MM-DD", () => {
    const t = toIsoDate(["MM/DD/YYYY", "D.M.YYYY", "D MMM YYYY", "YYYY-MM-DD HH:mm", "M/D/YY h:mm A"]);
    expect(t("03/05/2024")).toBe("2024-03-05");
    expect(t("5.3.2024")).toBe("2024-03-05");
    expect(t("5 Mar 2024")).toBe("2024-03-05");
    expect(t("2024-03-05 14:22")).toBe("2024-03-05");
    expect(t("3/5/24 2:22 PM")).toBe("2024-03-05");
  });

  it("reads an ISO date-time's date as written, ignoring the offset", () => {
    const t = toIsoDate(["iso"]);
    expect(t("2024-03-05")).toBe("2024-03-05");
    expect(t("2024-03-05T23:30:00-05:00")).toBe("2024-03-05");
    expect(t("2024-03-05T10:00:00Z")).toBe("2024-03-05");
  });

  it("pivots two-digit years at 70", () => {
    const t = toIsoDate(["DD/MM/YY"]);
    expect(t("01/02/69")).toBe("2069-02-01");
    expect(t("01/02/70")).toBe("1970-02-01");
  });

  it("rejects a day the calendar does not have, and text in no format", () => {
    const t = toIsoDate(["M/D/YYYY"]);
    expect(t("2/29/2024")).toBe("2024-02-29");
    const bad = t("2/30/2024");
    expect(isFailure(bad) && bad.code).toBe("invalid_date");
    expect(isFailure(t("yesterday"))).toBe(true);
  });

  it("names the formats, never the value, when it fails", () => {
    const bad = toIsoDate(["MM/DD/YYYY"])("not a date");
    expect(isFailure(bad) && bad.message).toBe("not a date in the format MM/DD/YYYY");
  });
});

describe("boolean words", () => {
  it("reads yes/no, true/false, 1/0, y/n and subscribed/unsubscribed in any case", () => {
    const t = toBoolean();
    for (const w of ["yes", "Y", "TRUE", "1", "Subscribed", " t "]) expect(t(w)).toBe(true);
    for (const w of ["no", "N", "false", "0", "UNSUBSCRIBED", "f"]) expect(t(w)).toBe(false);
  });

  it("takes its own words, and negates", () => {
    const t = toBoolean({ true: ["oui"], false: ["non"], negate: true });
    expect(t("OUI")).toBe(false);
    expect(t("non")).toBe(true);
    expect(isFailure(t("yes"))).toBe(true);
  });

  it("rejects a word it does not know", () => {
    const bad = toBoolean()("maybe");
    expect(isFailure(bad) && bad.code).toBe("not_boolean");
  });
});

describe("phone", () => {
  it("normalises national numbers with the default country to E.164", () => {
    const t = toE164("US");
    expect(t("(415) 555-0132")).toBe("+14155550132");
    expect(t("415.555.0199")).toBe("+14155550199");
    expect(t("1-415-555-0199")).toBe("+14155550199");
    expect(toE164("GB")("020 7946 0958")).toBe("+442079460958");
  });

  it("keeps international numbers whatever the default country", () => {
    expect(toE164("US")("+44 20 7946 0958")).toBe("+442079460958");
    expect(toE164(undefined)("+49 30 901820")).toBe("+4930901820");
  });

  it("gives each number of one shape its own digits (the memo keeps only the shape)", () => {
    const t = toE164("US");
    expect(t("(415) 555-0132")).toBe("+14155550132");
    expect(t("(415) 555-0177")).toBe("+14155550177");
    expect(t("415 555 0100")).toBe("+14155550100");
  });

  it("rejects what is not a phone number", () => {
    const t = toE164("US");
    for (const v of ["12", "555-0199", "call me", "020 7946 0958"]) {
      const r = t(v);
      expect(isFailure(r) && r.code).toBe("invalid_phone");
    }
    expect(isFailure(toE164(undefined)("(415) 555-0132"))).toBe(true);
  });

  it("normalises every item of a list", () => {
    expect(compileTransforms(["split", { phone: "US" }])("415-555-0111; 415-555-0112")).toEqual([
      "+14155550111",
      "+14155550112",
    ]);
  });
});

describe("split", () => {
  it("splits on the separator, trims and drops empty items", () => {
    expect(split(";")("a@x.org; ;b@x.org;")).toEqual(["a@x.org", "b@x.org"]);
    expect(split("|")("one|two")).toEqual(["one", "two"]);
  });
});

describe("chains", () => {
  it("runs transforms in order and stops at the first failure", () => {
    expect(compileTransforms(["trim", "lowercase", "split"])(" A@X.ORG;B@X.ORG ")).toEqual([
      "a@x.org",
      "b@x.org",
    ]);
    const r = compileTransforms(["trim", { date: "MM/DD/YYYY" }, "uppercase"])("31/12/2024");
    expect(isFailure(r)).toBe(true);
  });
});

describe("daysIn", () => {
  it("agrees with the Date calendar for every month from year 1 to 2500", () => {
    for (let year = 1; year <= 2500; year++) {
      for (let month = 1; month <= 12; month++) {
        const date = new Date(0);
        date.setUTCFullYear(year, month, 0);
        expect(daysIn(year, month)).toBe(date.getUTCDate());
      }
    }
  });
});
