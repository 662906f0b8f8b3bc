// The naive baseline of bench/import-bench.ts: what a script written in
// an afternoon does — csv-parse with `columns: true`, four columns mapped,
// batches of 500, two requests in flight, no validation, no ledger.
// Plain JavaScript run by node, as such a script would be.
//   node bench/naive-import.mjs FILE BASE_URL TOKEN STUDY
import { createReadStream } from "node:fs";
import { parse } from "csv-parse";

const [file, baseUrl, token, study] = process.argv.slice(2);
const url = `${baseUrl}/studies/${study}/participants/import`;
const inFlight = new Set();
let imported = 0;

async function send(people) {
  const res = await fetch(url, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ people, identifier: "email" }),
  });
  if (!res.ok) throw new Error(`import answered ${res.status}: ${await res.text()}`);
  imported += (await res.json()).count;
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
