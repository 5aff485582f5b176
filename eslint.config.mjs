// @ts-check
/**
 * The linter and formatter of the whole repository: ESLint with typescript-eslint's
 * recommended rules, and dprint (through `@effect/eslint-plugin`) with the Effect
 * codebase's own formatting settings. `pnpm lint` checks; `pnpm format` rewrites.
 */
import * as effectEslint from "@effect/eslint-plugin"
import tseslint from "typescript-eslint"

export default tseslint.config(
  {
    ignores: [
      "**/node_modules/**",
      "**/dist/**",
      "**/.examples/**",
      "**/*.d.ts",
      "packages/server/viewer/dist/**",
      "test-artifacts/**",
      "bench-results/**"
    ]
  },
  {
    files: ["**/*.ts", "**/*.mts", "**/*.mjs"],
    extends: [tseslint.configs.recommended],
    plugins: { "@effect": effectEslint },
    rules: {
      "@effect/dprint": ["error", {
        config: {
          indentWidth: 2,
          lineWidth: 120,
          semiColons: "asi",
          quoteStyle: "alwaysDouble",
          trailingCommas: "never",
          operatorPosition: "maintain",
          "arrowFunction.useParentheses": "force"
        }
      }],
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "off",
      "@typescript-eslint/no-namespace": "off",
      "@typescript-eslint/no-empty-object-type": "off"
    }
  }
)
