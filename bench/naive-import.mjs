// The naive baseline of bench/import-bench.ts: what a script written in
// an afternoon does — csv-parse with `columns: true`, four columns mapped,
// batches of 500, two requests in flight, no validation, no ledger. A 429
// waits the Retry-After it carries and sends the same batch again.
// Plain JavaScript run by node, as such a script would be.
//   node bench/naive-import.mjs FILE BASE_URL TOKEN STUDY
import { createReadStream } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { parse } from "csv-parse";

const [file, baseUrl, token, study] = process.argv.slice(2);
const url = `${baseUrl}/studies/${study}/participants/import`;
const inFlight = new Set();
let imported = 0;

async function send(people) {
  for (;;) {
    const res = await fetch(url, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ people, identifier: "email" }),
    });
    if (res.status === 429) {
      await res.text();
      await sleep(Number(res.headers.get("retry-after") ?? "1") * 1000);
      continue;
    }
    if (!res.ok) throw new Error(`import answered ${res.status}: ${await res.text()}`);
    imported += (await res.json()).count;
    return;
  }
}

async function flight(people) {
  while (inFlight.size >= 2) await Promise.race(inFlight);
  const p = send(people).finally(() => inFlight.delete(p));
  inFlight.add(p);
}

let batch = [];
for await (const r of createReadStream(file).pipe(parse({ columns: true, bom: true }))) {
  batch.push({
    email: r.Email,
    firstName: r["First Name"],
    lastName: r["Last Name"],
    phone: r["Phone Number"],
  });
  if (batch.length === 500) {
    await flight(batch);
    batch = [];
  }
}
if (batch.length > 0) await flight(batch);
await Promise.all(inFlight);
process.stdout.write(`${imported}\n`);
