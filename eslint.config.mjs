// Lint and format as Effect's own repositories do: ESLint's and typescript-eslint's recommended
// rules, dprint formatting through @effect/eslint-plugin, sorted imports.
import effect from "@effect/eslint-plugin"
import js from "@eslint/js"
import simpleImportSort from "eslint-plugin-simple-import-sort"
import tseslint from "typescript-eslint"

import generatorsOnce from "./eslint/generatorsOnce.mjs"

/** A module inside an `internal` folder of effect or an @effect package. */
const INTERNAL_MODULE = /^(effect|@effect\/[^/]+)\/(.+\/)?internal(\/|$)/
const INTERNAL_MESSAGE = "Effect's internal modules are not its API: use the package's public exports."
const CONTEXT_MESSAGE = "No unsafe Context functions: read services with yield*, provide them with Effect.provideService or layers."
const SERVE_MESSAGE = "Serve with HttpRouter.serve (or HttpRouter.toHttpEffect); build layers with Layer.build."
/** A relative import of the contract (schema/) from below it. */
const CONTRACT_MODULE = /^(\.\.\/)+schema(\/|$)/
const CONTRACT_MESSAGE =
  "The domain is the ground floor: it imports nothing from the contract (schema/ imports the domain). Move the literal or schema down into src/domain."
const RUN_MESSAGE = "Run an effect from a callback with a scoped FiberSet.makeRuntime (or fork it with Effect.forkDetach)."

export default tseslint.config(
  { ignores: ["node_modules/**", ".data/**", "dist/**", "test/fixtures/**", ".docs-check-*/**", "vendor/**"] },
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
  },
  {
    // No generator function made per call on the service's code paths (eslint/generatorsOnce.mjs).
    files: ["src/**/*.ts"],
    plugins: { local: generatorsOnce },
    rules: { "local/generators-once": "error" }
  },
  {
    // Effect's public API only (docs/contributor.md, "Effect's public API only"): no internal module
    // of an Effect package, by import or by path, and none of the functions that reach into a
    // context or a runtime from outside (an Effect release may change them and break the service at
    // run time only). Public names that merely end in `Unsafe` (HttpServerResponse.jsonUnsafe,
    // Metric's updateUnsafe, Queue.offerUnsafe, Deferred.doneUnsafe, Duration.fromInputUnsafe) are
    // Effect's documented API and stay allowed.
    files: ["**/*.ts", "**/*.mjs"],
    rules: {
      "no-restricted-imports": ["error", { patterns: [{ regex: INTERNAL_MODULE.source, message: INTERNAL_MESSAGE }] }],
      "no-restricted-syntax": [
        "error",
        // Imports and exports are no-restricted-imports' (above); this takes import(), require and the like.
        {
          selector: `:not(ImportDeclaration, ExportNamedDeclaration, ExportAllDeclaration) > Literal[value=${INTERNAL_MODULE}]`,
          message: INTERNAL_MESSAGE
        },
        {
          selector: "CallExpression[callee.property.name='resolve'] > Literal.arguments[value=/^@?effect(\\/|$)/]",
          message: "Resolving a file of an Effect package by path reaches past its exports: " + INTERNAL_MESSAGE
        },
        {
          selector:
            "CallExpression[callee.object.name='path'][callee.property.name=/^(join|resolve)$/] > Literal.arguments[value='internal']",
          message: "A path into a package's internal folder: " + INTERNAL_MESSAGE
        },
        { selector: "MemberExpression[object.name='Context'][property.name=/Unsafe$/]", message: CONTEXT_MESSAGE },
        {
          selector: "ImportDeclaration[source.value='effect/Context'] > ImportSpecifier[imported.name=/Unsafe$/]",
          message: CONTEXT_MESSAGE
        },
        {
          selector: "ImportDeclaration[source.value='effect/Layer'] > ImportSpecifier[imported.name='buildWithMemoMap']",
          message: SERVE_MESSAGE
        },
        {
          selector: "ImportDeclaration[source.value='effect/Effect'] > ImportSpecifier[imported.name='runForkWith']",
          message: RUN_MESSAGE
        },
        { selector: "MemberExpression[property.name='mapUnsafe']", message: CONTEXT_MESSAGE },
        { selector: "MemberExpression[object.name='Layer'][property.name='buildWithMemoMap']", message: SERVE_MESSAGE },
        { selector: "MemberExpression[object.name='Effect'][property.name='runForkWith']", message: RUN_MESSAGE },
        {
          selector: "MemberExpression[property.name='interruptUnsafe']",
          message: "Interrupt a fiber with Fiber.interrupt (in the background: Effect.forkDetach(Fiber.interrupt(fiber)))."
        },
        {
          selector: "CallExpression[callee.object.name='Object'][callee.property.name='create']",
          message:
            "No object built over another's prototype and getters (a request with other parts: HttpServerRequest.fromClientRequest or modify)."
        }
      ]
    }
  },
  {
    // Layers only point down (docs/contributor.md, "Code layout"): src/domain is the ground floor, so
    // none of its files imports the contract. The contract's literals that the rules read live in
    // src/domain and schema/ names them. This entry replaces the rule's options for src/domain, so it
    // repeats the guard on Effect's internal modules.
    files: ["src/domain/**/*.ts"],
    rules: {
      "no-restricted-imports": ["error", {
        patterns: [
          { regex: INTERNAL_MODULE.source, message: INTERNAL_MESSAGE },
          { regex: CONTRACT_MODULE.source, caseSensitive: true, message: CONTRACT_MESSAGE }
        ]
      }]
    }
  }
)
