export { createRateGovernor, RateGovernor, type RateGovernorOptions } from "./rate-governor.ts";
