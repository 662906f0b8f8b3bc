import { writeFileSync } from "node:fs";
import { openApiText } from "./openapi.ts";

// `npm run openapi`: regenerates docs/openapi.json from the endpoint table.
writeFileSync(new URL("../../docs/openapi.json", import.meta.url), openApiText());
console.log("wrote docs/openapi.json");
