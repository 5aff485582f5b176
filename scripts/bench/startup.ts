/**
 * Start-up of the compiled `sluice` command: `node packages/cli/dist/bin.js --version`
 * against `node -e 0` (Node's own start-up, the floor), wall time and CPU time of the
 * child processes, alternating rounds. Needs `pnpm build` first.
 */
import { spawnSync } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { performance } from "node:perf_hooks"

const bin = "packages/cli/dist/bin.js"
const ROUNDS = 9

// user + system CPU time of every finished child of this process, in ms (Linux /proc)
const childrenCpuMs = (): number => {
  const fields = readFileSync("/proc/self/stat", "utf8").split(") ")[1]!.split(" ")
  // after "pid (comm) ": state is field 3; cutime and cstime are fields 16 and 17
  return ((Number(fields[13]) + Number(fields[14])) * 1000) / 100
}

const once = (args: ReadonlyArray<string>): { readonly wall: number; readonly cpu: number } => {
  const cpu = childrenCpuMs()
  const start = performance.now()
  const result = spawnSync(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] })
  const wall = performance.now() - start
  if (result.status !== 0) throw new Error(`node ${args.join(" ")} exited ${result.status}: ${result.stderr}`)
  return { wall, cpu: childrenCpuMs() - cpu }
}

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

/** The `startup` section. */
export const run = async (): Promise<string> => {
  if (!existsSync(bin)) return `## Start-up\n\n${bin} is missing: run \`pnpm build\` first.\n`
  const floorCase = { name: "node -e 0", args: ["-e", "0"], wall: [] as Array<number>, cpu: [] as Array<number> }
  const cliCase = {
    name: `node ${bin} --version`,
    args: [bin, "--version"],
    wall: [] as Array<number>,
    cpu: [] as Array<number>
  }
  const cases = [floorCase, cliCase]
  for (const { args } of cases) once(args) // warm the file cache
  for (let i = 0; i < ROUNDS; i++) {
    for (const c of cases) {
      const { cpu, wall } = once(c.args)
      c.wall.push(wall)
      c.cpu.push(cpu)
    }
  }
  const summarize = (c: typeof floorCase) => ({ name: c.name, wall: median(c.wall), cpu: median(c.cpu) })
  const floor = summarize(floorCase)
  const cli = summarize(cliCase)
  return [
    `## Start-up (median of ${ROUNDS} alternating rounds)`,
    "",
    "| command | wall | CPU |",
    "|---|---:|---:|",
    ...[floor, cli].map((c) => `| ${c.name} | ${c.wall.toFixed(0)} ms | ${c.cpu.toFixed(0)} ms |`),
    `| ratio | ${(cli.wall / floor.wall).toFixed(1)}x | ${(cli.cpu / floor.cpu).toFixed(1)}x |`,
    ""
  ].join("\n")
}
