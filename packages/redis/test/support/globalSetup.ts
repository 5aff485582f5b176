// moved to @sluice/testing; this re-export goes once every config names the package
export { default } from "@sluice/testing/redis/globalSetup"
