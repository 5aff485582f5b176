/**
 * The test projects of the workspace: one per package, each with its tests under
 * `packages/<name>/test`, and the repository's tools with theirs under `scripts/test`.
 * `vitest.config.ts` passes this list to `test.projects`.
 */
export default ["packages/*", "scripts"]
