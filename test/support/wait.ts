// How tests wait: for a condition they name (`until`), for the clock to reach an instant the test computed
// (`untilTime`), and, only to show that something does NOT happen, for a window (`sleep`).

/** Polls `check` until it holds; the default bound is wide for a loaded 2-core machine (a passing wait ends at once). */
export async function until(check: () => boolean | Promise<boolean>, timeoutMs = 15_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Waits until the wall clock reaches `atMs` (ms since the epoch): for what the clock decides, as a token's expiry
 * in another process, an instant computed from what the test made, not a guessed margin.
 */
export async function untilTime(atMs: number, what: string): Promise<void> {
  const wait = atMs - Date.now();
  if (wait > 60_000) throw new Error(`${what} is ${wait} ms away: a test should not wait so long`);
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
}

/** Waits until the current second is past `expSeconds` (a JWT `exp`): the token is expired for every verifier. */
export const untilExpired = (expSeconds: number, what = 'the token to expire'): Promise<void> => untilTime(expSeconds * 1000 + 1, what);

/**
 * A fixed wait. Only to show that something does NOT happen within a window, where no later event marks the
 * window's end; every call says on its line why nothing better can be awaited.
 */
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
