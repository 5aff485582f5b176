// moved to @sluice/testing; this re-export goes once every import names the package
export * from "@sluice/testing/fixtures"
