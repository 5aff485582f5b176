import { sluiceProject } from "../../scripts/vitestProject.js"

export default sluiceProject("effect-ai")
