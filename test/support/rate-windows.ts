// Rate limits count in fixed windows: a test run that a window's end cuts in two starts counting again
// halfway. These let such a test notice that and run again, whole, in the next window.

/** The number of the fixed window of `windowSeconds` that now falls in. */
export const windowOf = (windowSeconds: number) => Math.floor(Date.now() / 1000 / windowSeconds);

/** Runs `run`; if it fails and a window's end fell during it, runs it once more, whole. */
export async function inOneWindow(windowSeconds: number, run: () => Promise<void>): Promise<void> {
  const window = windowOf(windowSeconds);
  try {
    await run();
  } catch (error) {
    if (windowOf(windowSeconds) === window) throw error;
    await run();
  }
}
