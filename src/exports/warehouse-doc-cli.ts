import { writeFileSync } from "node:fs";
import { warehouseDictionary } from "./warehouse-dictionary.ts";

// `npm run docs:warehouse`: regenerates docs/warehouse.md from the schemas that create the tables.
writeFileSync(new URL("../../docs/warehouse.md", import.meta.url), warehouseDictionary());
console.log("wrote docs/warehouse.md");
