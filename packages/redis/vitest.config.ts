import { sluiceProject } from "../../scripts/vitestProject.js"

export default sluiceProject("redis", {
  globalSetup: ["test/support/globalSetup.ts"]
})
