/**
 * The emulator in a process of its own, for benchmarks that measure the CLI
 * against it: the service's work does not share the CLI's event loop. Adds
 * `--participants N` participants to each study `--study` (repeatable) straight into the store
 * (a snapshot of 800,000 people through the admin API would take minutes),
 * then prints one JSON line `{"origin","baseUrl","adminToken"}` and serves until killed.
 *
 *   npx tsx bench/helpers/emulator-process.ts --token T --study study_bench --participants 100000 [--rate-limit 500/20s]
 */
import { parseArgs } from "node:util";
import { startEmulator } from "../../src/emulator/index.ts";

const { values: args } = parseArgs({
  options: {
    token: { type: "string", default: "bench-token" },
    study: { type: "string", multiple: true, default: ["study_bench"] },
    participants: { type: "string", default: "1000" },
    "rate-limit": { type: "string", default: "off" },
  },
});
const N = Number(args.participants);
if (!(Number.isInteger(N) && N >= 0)) throw new Error(`--participants ${args.participants}: not a count`);

const emulator = await startEmulator({
  port: 0,
  host: "127.0.0.1",
  admin: true,
  rateLimit: args["rate-limit"],
  tokens: [args.token],
  sizes: { people: 50, participantsPerStudy: 5 },
});
const store = emulator.store;
const template = store.people.values().next().value;
if (!template) throw new Error("the seeded emulator has no people");
const t0 = Date.UTC(2026, 0, 1);
for (const study of args.study) {
  const res = await fetch(`${emulator.origin}/__emulator/studies`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${emulator.adminToken}` },
    body: JSON.stringify({ studyId: study, status: "ACTIVE" }),
  });
  if (!res.ok) throw new Error(`creating ${study}: ${res.status} ${await res.text()}`);
  for (let i = 1; i <= N; i++) {
    const personId = `${study}_person_${i}`;
    store.addPerson({
      ...template,
      personId,
      email: `${study}.${i}@example.com`,
      phone: null,
      additionalEmails: [],
      additionalPhones: [],
      properties: [],
      populationIds: [],
    });
    store.addParticipant({
      participantId: `${study}_participant_${i}`,
      personId,
      studyId: study,
      status: "INVITED",
      approvalStatus: "HIDDEN",
      screenerState: "SCREENER_SENT",
      addedToStudyAt: new Date(t0 + i * 1000).toISOString(),
      invitedToStudyAt: new Date(t0 + i * 1000 + 3_600_000).toISOString(),
    });
  }
}
process.stdout.write(
  `${JSON.stringify({ origin: emulator.origin, baseUrl: emulator.baseUrl, adminToken: emulator.adminToken })}\n`,
);
const stop = () => void emulator.close().finally(() => process.exit(0));
process.once("SIGTERM", stop);
process.once("SIGINT", stop);
