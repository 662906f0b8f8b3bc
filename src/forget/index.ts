/** Forgetting a person everywhere recruit-sync keeps them (docs/security.md). */

export { type ForgetOptions, forgetPeople } from "./forget-person.ts";
export { FORGET_TABLES, type ForgetColumnHolds, type ForgetTable } from "./forget-tables.ts";
export { readIdentifierFile } from "./identifier-file.ts";
export { type ForgetReceipt, RECEIPTS_FOLDER } from "./receipt.ts";
export { formatForgetSummary } from "./summary.ts";
