// The project's lint (../shared/STYLE.md "Lint"): floating promises, type-only imports, no `any`,
// no relative import that climbs out of a lib (libs are reached through `#libs/<name>`), zero warnings.
// Type checking itself is `tsc` (npm run lint runs both).
import { readdirSync } from 'node:fs';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// Every folder under libs/, read when the config loads: a new library is covered without editing the rule.
const LIBS = readdirSync(new URL('./libs', import.meta.url), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name);

export default tseslint.config(
  { ignores: ['dist/**', 'apps/dashboard/dist/**', 'apps/dashboard/src/api/schema.d.ts', 'node_modules/**', 'coverage/**', 'bench/**', 'scripts/**', '**/*.js', '**/*.mjs', '**/*.cjs'] },
  {
    files: ['apps/**/*.ts', 'apps/**/*.tsx', 'libs/**/*.ts', 'libs/**/*.tsx', 'test/**/*.ts'],
    extends: [js.configs.recommended, ...tseslint.configs.recommended],
    languageOptions: {
      parserOptions: {
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
      },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      // A closure that reads a variable assigned once after it is made (a server's handler and the server).
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/consistent-type-imports': ['error', { prefer: 'type-imports', fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      'no-restricted-imports': ['error', {
        // `../../<lib>/` climbs out of a lib into another; `../libs/<lib>/` reaches a lib from an app or test/.
        patterns: [{ regex: `^(\\.\\./)+(\\.\\./|libs/)(${LIBS.join('|')})/`, message: 'Import a lib through #libs/<name>, not by a relative path.' }],
      }],
    },
  },
);
