// eslint for the hand-written TypeScript (src/, test/, bench/): typescript-
// eslint's recommended rules. Generated code (src/gen/, addon/gen/) and
// build outputs are not linted. An eslint-disable comment carries its reason
// on the same line ("-- why"), and one that no longer disables anything fails.
import tseslint from "typescript-eslint";

export default tseslint.config(
	{
		ignores: ["dist/", "build/", "node_modules/", "src/gen/", "addon/gen/", ".tap/", "obj/"],
	},
	...tseslint.configs.recommended,
	{
		linterOptions: { reportUnusedDisableDirectives: "error" },
		rules: {
			// `const { at: _, ...rest } = o` is how a field is left out of a
			// copy; the named field is there to be dropped, not used
			"@typescript-eslint/no-unused-vars": ["error", { ignoreRestSiblings: true }],
		},
	},
	{
		// examples/ are plain CommonJS modules a user runs with node as they are
		files: ["examples/**/*.js"],
		languageOptions: { sourceType: "commonjs", globals: { require: "readonly", exports: "writable", process: "readonly" } },
		rules: { "@typescript-eslint/no-require-imports": "off" },
	},
);
