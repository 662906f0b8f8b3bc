import { ImportJobDefinition } from "../../src/config/import-job.ts";
import { mapRow, planColumns, planRow, splitValues, saysNoValue } from "../../src/imports/rules/index.ts";
const job = (x: Record<string, unknown>) => ImportJobDefinition.parse({ kind: "import", target: { studyId: "s" }, ...x });
const run = (headers: string[], x: Record<string, unknown>, ...rows: string[][]) => {
  const def = job(x);
  const cp = planColumns(headers, def);
  console.log("plan", cp.columns.map((c) => [c.index, c.header, c.to, c.source]), "unmapped", cp.unmapped, "ignored", cp.ignored);
  const rp = planRow(cp, def);
  rows.forEach((r, i) => console.log(JSON.stringify(mapRow(rp, r, i + 2))));
};
try { run(["Email", "Name", "Email"], { columns: [{ column: "Email", to: "email" }] }); } catch (e) { console.log((e as any).code, (e as Error).message); }
try { run(["Email", "Name", "Email"], { columns: [{ column: "Email", to: "email", occurrence: 3 }] }); } catch (e) { console.log((e as any).code, (e as Error).message); }
try { run(["Email", "Name", "Email"], { columns: [{ column: "Name", to: "email", position: 3 }] }); } catch (e) { console.log((e as any).code, (e as Error).message); }
run(["Email", "Name", "Email"], { columns: [{ column: "Email", to: "email", occurrence: 2 }, { position: 1, to: "additionalEmails" }] }, ["a@x.org", "Ann", "b@x.org"]);
run(["Email", "First Name", "Phone Number", "Company Name", "Phone Number", ""], { preset: "hubspot" }, ["a@x.org", "Ann", "+49 30 1234567", "Acme", "+1 415 555 0132", ""]);
run(["Email", "Phone", "Business Phone", "Mobile", "Home Phone", "Email Opt Out"], { preset: "salesforce" }, ["A@X.org", "+49 30 1234567", "+49 30 7654321", "+49 151 5550211", "+49 30 5550210", "1"]);
run(["Email", "Work Email"], { preset: "hubspot", columns: [{ column: "Work Email", to: "email" }] }, ["a@x.org", "w@x.org"]);
try { run(["First Name", "Phone"], { preset: "hubspot" }); } catch (e) { console.log((e as any).code, (e as Error).message); }
console.log(splitValues("a@x.org ::: b@x.org; c@x.org, d@x.org", false), splitValues("+49 30 1234,5 ::: +49 151 5550211, +49 30 5550210", true));
console.log(["null", "N/A", "-", "#N/A", "none", "nil", "Nina", "--", "na"].map(saysNoValue));
run(["Email", "Phone", "First"], { columns: [{ column: "Email", to: "email" }, { column: "Phone", to: "phone", transforms: ["phone"] }, { column: "First", to: "firstName" }] }, ["null", "n/a", "None"], ["a@x.org", "n/a", "None"], ["bad ::: b@x.org", "030 1234567", "x"]);
run(["Email", "Phone", "Country"], { phoneCountry: "US", phoneCountryColumn: "Country", columns: [{ column: "Email", to: "email" }, { column: "Phone", to: "phone", transforms: ["phone"] }] }, ["a@x.org", "030 1234567", "Deutschland"], ["b@x.org", "020 7946 0958", "UK"], ["c@x.org", "(415) 555-0132", ""], ["d@x.org", "030 1234567", ""]);
run(["Email", "Name", "First"], { columns: [{ column: "Email", to: "email" }, { column: "Name", to: "fullName" }, { column: "First", to: "firstName" }] }, ["a@x.org", "Dr. Jane Q. Smith Jr.", ""], ["b@x.org", "Smith, Jane", ""], ["c@x.org", "Cher", ""], ["d@x.org", "Smith, Jane", "Janet"]);
run(["Email", "Subscribed", "Opted Out"], { optIn: "allow", columns: [{ column: "Email", to: "email" }, { column: "Subscribed", to: "isOptedOut" }] }, ["a@x.org", "yes", ""], ["b@x.org", "no", ""], ["c@x.org", "cleaned", ""], ["d@x.org", "Unsubscribed", ""]);
run(["Email", "Subscribed", "Opted Out"], { columns: [{ column: "Email", to: "email" }, { column: "Opted Out", to: "isOptedOut" }] }, ["a@x.org", "", "yes"], ["b@x.org", "", "no"]);
run(["Email", "Work", "Other"], { columns: [{ column: "Email", to: "email" }, { column: "Work", to: "email" }, { column: "Other", to: "additionalEmails" }] }, ["bad", "W@x.org", "w@X.org;o@x.org"], ["a@x.org", "A@X.org", ""]);
