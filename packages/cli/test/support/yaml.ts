/**
 * A YAML parser for tests that read the repository's YAML files (compose.yaml).
 */
export { parse } from "yaml"
