import { afterEach, describe, expect, it } from "vitest";
import type { EmailMessage, SearchEmailsBody } from "../../src/api/index.ts";
import { startTestEmulator, type TestEmulator } from "../helpers/emulator.ts";
import { raw } from "./raw-http.ts";

let emu: TestEmulator | undefined;
afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

const DAY = 86_400_000;

async function all(e: TestEmulator, body: Omit<SearchEmailsBody, "pageInfo">): Promise<EmailMessage[]> {
  const out: EmailMessage[] = [];
  for await (const page of e.client.emailPages(body, { pageSize: 100 })) out.push(...page.results);
  return out;
}

describe("POST /messages/emails/search", () => {
  it("returns every message of the workspace in the paging envelope", async () => {
    emu = await startTestEmulator({ sizes: { emailMessages: 120 } });
    const page = await emu.client.searchEmails({ pageInfo: { size: 50 } });
    expect(page.total).toBe(120);
    expect(page.results).toHaveLength(50);
    expect(page.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
    const m = page.results[0] as EmailMessage;
    for (const key of [
      "id",
      "recipientId",
      "senderId",
      "status",
      "type",
      "studyId",
      "participantId",
      "messageCampaignId",
      "recipientEmail",
      "senderEmail",
      "subject",
    ]) {
      expect(typeof m[key]).toBe("string");
    }
    for (const key of ["sentAt", "scheduledSendTime", "createdAt"])
      expect(Number.isNaN(Date.parse(String(m[key])))).toBe(false);
    expect(m).not.toHaveProperty("teamId");
    expect((await all(emu, {})).length).toBe(120);
  });

  it("filters with IS on the message status and CONTAINS on the person's email", async () => {
    emu = await startTestEmulator({ sizes: { emailMessages: 200 } });
    const everything = await all(emu, {});
    const delivered = await all(emu, {
      filter: {
        operator: "AND",
        filters: [
          {
            message: {
              propertyType: "SINGLE_SELECT",
              propertyName: "EMAIL_STATUS",
              operator: "IS",
              value: "DELIVERED",
            },
          },
        ],
      },
    });
    expect(delivered.length).toBe(everything.filter((m) => m.status === "DELIVERED").length);
    expect(delivered.length).toBeGreaterThan(0);
    const target = everything[0] as EmailMessage;
    const fragment = String(target.recipientEmail).split("@")[0] as string;
    const byEmail = await all(emu, {
      filter: {
        operator: "AND",
        filters: [
          {
            person: { propertyType: "STRING", propertyName: "EMAIL", operator: "CONTAINS", value: fragment },
          },
        ],
      },
    });
    expect(byEmail.map((m) => m.id)).toContain(target.id);
    for (const m of byEmail) expect(String(m.recipientEmail)).toContain(fragment);
  });

  it("joins groups with AND and OR", async () => {
    emu = await startTestEmulator({ sizes: { emailMessages: 200 } });
    const everything = await all(emu, {});
    const delivered = {
      message: {
        propertyType: "SINGLE_SELECT",
        propertyName: "EMAIL_STATUS",
        operator: "IS",
        value: "DELIVERED",
      },
    };
    const reminder = {
      message: {
        propertyType: "SINGLE_SELECT",
        propertyName: "EMAIL_TYPE",
        operator: "IS",
        value: "REMINDER",
      },
    };
    const and = await all(emu, { filter: { operator: "AND", filters: [delivered, reminder] } });
    const or = await all(emu, { filter: { operator: "OR", filters: [delivered, reminder] } });
    expect(and.length).toBe(
      everything.filter((m) => m.status === "DELIVERED" && m.type === "REMINDER").length,
    );
    expect(or.length).toBe(
      everything.filter((m) => m.status === "DELIVERED" || m.type === "REMINDER").length,
    );
    expect(or.length).toBeGreaterThan(and.length);
  });

  it("takes NUMBER_OF_DAYS_AGO with an amount, relative to the emulator's clock", async () => {
    emu = await startTestEmulator({ sizes: { emailMessages: 200 } });
    const now = Date.now();
    const everything = await all(emu, {});
    const within = (amount: number) => ({
      filter: {
        operator: "AND" as const,
        filters: [
          {
            message: {
              propertyType: "DATETIME",
              propertyName: "SENT_AT",
              operator: "IS_WITHIN",
              value: "NUMBER_OF_DAYS_AGO",
              amount,
            },
          },
        ],
      },
    });
    const week = await all(emu, within(7));
    const expected = everything.filter((m) => Date.parse(String(m.sentAt)) >= now - 7 * DAY - 60_000);
    expect(Math.abs(week.length - expected.length)).toBeLessThanOrEqual(1);
    expect(week.length).toBeGreaterThan(0);
    // Two hundred days later, nothing was sent within the last week.
    await emu.admin("/clock", { body: { advanceDays: 200 } });
    expect(await all(emu, within(7))).toHaveLength(0);
    const missingAmount = await raw(emu, "POST", "/messages/emails/search", {
      body: {
        filter: {
          operator: "AND",
          filters: [
            {
              message: {
                propertyType: "DATETIME",
                propertyName: "SENT_AT",
                operator: "IS_WITHIN",
                value: "NUMBER_OF_DAYS_AGO",
              },
            },
          ],
        },
      },
    });
    expect(missingAmount.status).toBe(400);
  });

  it("restricts to a study, a team, a sender user and a population", async () => {
    emu = await startTestEmulator({ sizes: { emailMessages: 200 } });
    const snap = await emu.snapshot();
    const messages = snap.emailMessages as (EmailMessage & { teamId: string; populationId: string })[];
    const sample = messages[0] as (typeof messages)[number];
    const cases: [Omit<SearchEmailsBody, "pageInfo">, (m: (typeof messages)[number]) => boolean][] = [
      [{ studyId: String(sample.studyId) }, (m) => m.studyId === sample.studyId],
      [{ userId: String(sample.senderId) }, (m) => m.senderId === sample.senderId],
      [{ teamId: sample.teamId }, (m) => m.teamId === sample.teamId],
      [{ populationId: sample.populationId }, (m) => m.populationId === sample.populationId],
    ];
    for (const [body, keep] of cases) {
      const found = await all(emu, body);
      expect(found.map((m) => m.id).sort()).toEqual(
        messages
          .filter(keep)
          .map((m) => m.id)
          .sort(),
      );
      expect(found.length).toBeGreaterThan(0);
    }
    expect(await all(emu, { studyId: "study_404" })).toHaveLength(0);
  });

  it("answers 400 JSON to filters it cannot read", async () => {
    emu = await startTestEmulator();
    const cases = [
      { filter: { operator: "XOR", filters: [] } },
      {
        filter: {
          operator: "AND",
          filters: [
            {
              message: { propertyType: "STRING", propertyName: "EMAIL_STATUS", operator: "IS", value: "x" },
              person: { propertyType: "STRING", propertyName: "EMAIL", operator: "IS", value: "x" },
            },
          ],
        },
      },
      {
        filter: {
          operator: "AND",
          filters: [
            { message: { propertyType: "STRING", propertyName: "NO_SUCH", operator: "IS", value: "x" } },
          ],
        },
      },
      {
        filter: {
          operator: "AND",
          filters: [
            {
              message: {
                propertyType: "STRING",
                propertyName: "SUBJECT",
                operator: "LOOKS_LIKE",
                value: "x",
              },
            },
          ],
        },
      },
      { pageInfo: { size: 101 } },
    ];
    for (const body of cases) {
      const res = await raw(emu, "POST", "/messages/emails/search", { body });
      expect(res.status).toBe(400);
      expect(res.contentType).toMatch(/^application\/json/);
      expect(res.json<{ errors: unknown[] }>().errors.length).toBeGreaterThan(0);
    }
  });
});
