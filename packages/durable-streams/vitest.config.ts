import { sluiceProject } from "@sluice/testing/vitest"
import { fileURLToPath } from "node:url"
import { mergeConfig } from "vitest/config"

// The conformance suite registers its tests with the `vitest` it imports: it is
// inlined, and its `vitest` is this workspace's, through test/support/conformanceVitest.ts.
const conformanceVitest = fileURLToPath(new URL("./test/support/conformanceVitest.ts", import.meta.url))

export default mergeConfig(
  sluiceProject("durable-streams", {
    // The redis package's setup: one redis-server on a free loopback port in a
    // temporary directory (or REDIS_URL), handed to tests as inject("redisUrl").
    globalSetup: ["@sluice/testing/redis/globalSetup"],
    server: { deps: { inline: [/@durable-streams\/server-conformance-tests/] } }
  }),
  {
    plugins: [{
      name: "conformance-vitest",
      enforce: "pre" as const,
      resolveId: (id: string, importer: string | undefined) =>
        id === "vitest" && importer?.includes("server-conformance-tests") === true ? conformanceVitest : null
    }]
  }
)
