// Times mapping rows (plan once, mapRow per row) with the rules of the tree named on the command line.
const root = process.argv[2] as string;
const { ImportJobDefinition } = await import(`${root}/src/config/import-job.ts`);
const rulesPath = process.argv[3] as string;
const r = { ...(await import(`${root}/${rulesPath}`)), ...(process.argv[4] ? await import(`${root}/${process.argv[4]}`) : {}) };
const def = ImportJobDefinition.parse({
  kind: "import", target: { studyId: "s" }, preset: "hubspot", phoneCountry: "US",
  columns: [{ column: "Opted Out", to: "isOptedOut" }, { column: "Company", to: { name: "Company", propertyType: "STRING" } }, { column: "Name", to: "fullName" }],
});
const headers = ["Email", "First Name", "Last Name", "Phone Number", "Mobile Phone Number", "Opted Out", "Company", "Name", "Last Contacted"];
const plan = r.planRow(r.planColumns(headers, def), def);
const rows: string[][] = [];
for (let i = 0; i < 300_000; i++) rows.push([`Person${i}@Example.org`, "Ann", `Smith${i % 97}`, `(415) 555-${String(i % 10000).padStart(4, "0")}`, i % 3 ? "" : `+1 212 555 ${String(i % 10000).padStart(4, "0")}`, i % 2 ? "yes" : "no", `Acme ${i % 13}`, i % 5 ? "" : "Smith, Jane", "2024-03-01 10:00"]);
let ok = 0;
const c0 = process.cpuUsage();
for (let k = 0; k < 3; k++) for (let i = 0; i < rows.length; i++) if (r.mapRow(plan, rows[i], i + 2).ok) ok++;
console.log(root.includes("main") ? "main " : "rules", ((process.cpuUsage(c0).user / 1000) / 3).toFixed(0), "ms CPU per 300k rows", ok);
