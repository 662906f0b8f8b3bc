/**
 * The first SIGTERM or SIGINT to a long-running command (worker, ops), listened for from before it
 * starts: a signal during its start-up is a stop, not Node's default kill. Only the first is taken:
 * a second one, while the stop is under way, takes Node's default action and ends the process at
 * once, as ops expect of a second Ctrl-C. `release()` when the command ends without a signal.
 */
export function stopSignal(): { signal: Promise<NodeJS.Signals>; release(): void } {
  let release = () => {};
  const signal = new Promise<NodeJS.Signals>((resolve) => {
    const onSignal = (received: NodeJS.Signals) => {
      release();
      resolve(received);
    };
    release = () => {
      process.off("SIGTERM", onSignal);
      process.off("SIGINT", onSignal);
    };
    process.on("SIGTERM", onSignal);
    process.on("SIGINT", onSignal);
  });
  return { signal, release };
}
