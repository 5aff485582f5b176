import { sluiceProject } from "@sluice/testing/vitest"

export default sluiceProject("views")
