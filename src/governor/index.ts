export { type BudgetKeys, budgetKeys, keyList } from "./budget-keys.ts";
export {
  type AcquireOptions,
  type ClientHooks,
  createRateGovernor,
  type GovernorState,
  type OnWait,
  type Permit,
  type Priority,
  RateGovernor,
  type RateGovernorOptions,
} from "./rate-governor.ts";
export { WaitUnion } from "./wait-union.ts";
