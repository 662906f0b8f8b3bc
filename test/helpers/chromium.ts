import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";

/** Debian's Chromium: no test downloads a browser (.ci/run installs the package when it is missing). */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** Chromium headless with the flags this machine needs; a clear error when it is not installed. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`no Chromium at ${CHROMIUM}: apt-get install -y chromium (or set CHROMIUM_PATH)`);
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"],
  });
}
