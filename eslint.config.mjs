// Lint and format as Effect's own repositories do: ESLint's and typescript-eslint's recommended
// rules, dprint formatting through @effect/eslint-plugin, sorted imports.
import effect from "@effect/eslint-plugin"
import js from "@eslint/js"
import simpleImportSort from "eslint-plugin-simple-import-sort"
import tseslint from "typescript-eslint"

export default tseslint.config(
  { ignores: ["node_modules/**", ".data/**", "dist/**", "test/fixtures/**", ".docs-check-*/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  ...effect.configs.dprint,
  {
    files: ["**/*.ts", "**/*.mjs"],
    plugins: { "simple-import-sort": simpleImportSort },
    languageOptions: { ecmaVersion: 2022, sourceType: "module" },
    rules: {
      "@effect/dprint": ["error", {
        config: {
          indentWidth: 2,
          lineWidth: 140,
          semiColons: "asi",
          quoteStyle: "alwaysDouble",
          trailingCommas: "never",
          operatorPosition: "maintain",
          "arrowFunction.useParentheses": "force",
          // simple-import-sort orders imports; dprint keeps their order
          "module.sortImportDeclarations": "maintain"
        }
      }],
      "simple-import-sort/imports": "error",
      // Deep imports, as Effect's own repositories do: a barrel loads every module of its package
      // (the platform's pulls in two API-docs bundles), which each process would hold in memory.
      "@effect/no-import-from-barrel-package": ["error", {
        packageNames: ["effect", "@effect/platform-node", "@effect/sql-pg"]
      }],
      "@typescript-eslint/no-unused-vars": ["error", {
        argsIgnorePattern: "^_",
        varsIgnorePattern: "^_",
        destructuredArrayIgnorePattern: "^_"
      }],
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/consistent-type-imports": ["error", { fixStyle: "inline-type-imports" }],
      "@typescript-eslint/no-namespace": "off",
      "@typescript-eslint/no-empty-object-type": "off"
    }
  }
)
