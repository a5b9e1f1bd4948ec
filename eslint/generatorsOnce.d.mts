// The types of the local ESLint plugin (generatorsOnce.mjs), for the test that runs its rule.
import type { Rule } from "eslint";

declare const plugin: { readonly rules: { readonly "generators-once": Rule.RuleModule } };
export default plugin;
