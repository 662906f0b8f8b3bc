/**
 * Log lines and progress bars share one terminal. While a bar is drawn in
 * place, the progress view installs a guard that lifts the bar, lets the log
 * line through and draws the bar again below it.
 */
type Guard = (write: () => void) => void;

let guard: Guard | undefined;

export function setTerminalGuard(next: Guard | undefined): void {
  guard = next;
}

/** Writes through the guard when a bar is on screen, else at once. */
export function writeAboveProgress(write: () => void): void {
  if (guard) guard(write);
  else write();
}
