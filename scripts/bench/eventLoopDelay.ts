/**
 * Loaded into a process the bench measures (`node --import`): how late its event loop
 * runs, `monitorEventLoopDelay` at a 10 ms resolution, written as JSON (`p50`, `p99`,
 * `max`, in ms) to the file `BENCH_EVENT_LOOP_FILE` names, every 250 ms; SIGUSR2
 * starts the histogram over (the bench sends it when the phase it measures starts).
 * A benchmark's instrument, never loaded by Sluice itself.
 */
import { writeFileSync } from "node:fs"
import { monitorEventLoopDelay } from "node:perf_hooks"

const file = process.env.BENCH_EVENT_LOOP_FILE
if (file !== undefined && file !== "") {
  const histogram = monitorEventLoopDelay({ resolution: 10 })
  histogram.enable()
  process.on("SIGUSR2", () => histogram.reset())
  setInterval(() => {
    const ms = (ns: number) => ns / 1e6
    writeFileSync(
      file,
      JSON.stringify({ p50: ms(histogram.percentile(50)), p99: ms(histogram.percentile(99)), max: ms(histogram.max) })
    )
  }, 250).unref()
}
