// Lint rules for the whole tree (npm run lint). Formatting is Prettier's job (.prettierrc.json),
// so eslint-config-prettier turns off every rule that would fight it.
import js from '@eslint/js'
import prettier from 'eslint-config-prettier'
import globals from 'globals'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  { ignores: ['node_modules/', 'data/', 'coverage/', 'dist/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  prettier,
  {
    languageOptions: { globals: globals.node },
    rules: {
      // Unused names are errors, except deliberate placeholders (`_whole`, `{ websites: _alias, ...rest }`).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
      // The path and encoding rules test for control characters on purpose.
      'no-control-regex': 'off',
    },
  },
  {
    // Tests and benchmarks read JSON bodies whose shape each assertion states.
    files: ['test/**', 'bench/**', 'src/db/migrations/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // The web site's one script runs in the browser.
    files: ['src/web/assets/**'],
    languageOptions: { globals: globals.browser },
  },
)
