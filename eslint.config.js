// Lint rules for the whole tree (npm run lint). Formatting is Prettier's job (.prettierrc.json),
// so eslint-config-prettier turns off every rule that would fight it. The TypeScript rules are
// type-aware: each .ts file is checked against the program of tsconfig.json.
import js from '@eslint/js'
import prettier from 'eslint-config-prettier'
import globals from 'globals'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  { ignores: ['node_modules/', 'data/', 'coverage/', 'dist/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  prettier,
  {
    languageOptions: {
      globals: globals.node,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // Unused names are errors, except deliberate placeholders (`_whole`, `{ websites: _alias, ...rest }`).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
      // The path and encoding rules test for control characters on purpose.
      'no-control-regex': 'off',
      // A promise is awaited, returned, or handed to something that handles its failure. node:test
      // tracks the promises its test() and describe() return, so those need no `void`.
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [
            { from: 'package', package: 'node:test', name: ['test', 'describe', 'it', 'suite', 'before', 'after', 'beforeEach', 'afterEach'] },
          ],
        },
      ],
      // A switch over a union names every member, or says with `default` what the others do.
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
    },
  },
  {
    // Tests and benchmarks read response bodies as parsed JSON, typed `any`, whose shape each
    // assertion checks.
    files: ['test/**', 'bench/**'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    // Migrations describe tables with Kysely's untyped schema builder (`Kysely<any>`).
    files: ['src/db/migrations/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // The plain JavaScript files (scripts/, bin/, the web site's script, the threads' entry, this
    // file) belong to no tsconfig project: tsconfig.json compiles TypeScript only. They keep the
    // rules that need no types.
    files: ['**/*.js'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    // The web site's one script runs in the browser.
    files: ['src/web/assets/**'],
    languageOptions: { globals: globals.browser },
  },
)
