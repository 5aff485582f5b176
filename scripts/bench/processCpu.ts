/**
 * CPU seconds of another local process (a `redis-server` the bench started), read
 * from /proc (Linux).
 */
import { readFile } from "node:fs/promises"

/** utime + stime of a local process, from /proc; undefined elsewhere or when it is gone. */
export const processCpuSeconds = async (pid: number | undefined): Promise<number | undefined> => {
  if (pid === undefined) return undefined
  try {
    const stat = await readFile(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return (Number(fields[11]) + Number(fields[12])) / 100
  } catch {
    return undefined
  }
}
