/**
 * The platform's timer, the client's wait between attempts: the client carries no
 * runtime of its own (no Effect Clock in a browser bundle), so it is a plain timeout,
 * cleared (and the wait over) on abort. Callers take a `sleep` option of this shape, so
 * tests give their own.
 *
 * @internal
 */
export const platformSleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal.aborted) return resolve()
    const timer = setTimeout(done, ms)
    function done() {
      clearTimeout(timer)
      signal.removeEventListener("abort", done)
      resolve()
    }
    signal.addEventListener("abort", done, { once: true })
  })
