import { sluiceProject } from "@sluice/testing/vitest"

/** The tests of the repository's own tools (`scripts/test`), a project beside the packages'. */
export default sluiceProject("scripts")
