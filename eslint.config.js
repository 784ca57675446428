// The project's lint (../shared/STYLE.md "Lint"): floating promises, type-only imports, no `any`,
// no relative import that climbs out of a lib (libs are reached through `#libs/<name>`), zero warnings.
// Type checking itself is `tsc` (npm run lint runs both).
import { readdirSync } from 'node:fs';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// Every folder under libs/, read when the config loads: a new library is covered without editing the rule.
const LIBS = readdirSync(new URL('./libs', import.meta.url), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name);

// `../../<lib>/` climbs out of a lib into another; `../libs/<lib>/` reaches a lib from an app or test/.
const THROUGH_LIBS = { regex: `^(\\.\\./)+(\\.\\./|libs/)(${LIBS.join('|')})/`, message: 'Import a lib through #libs/<name>, not by a relative path.' };

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
      'no-restricted-imports': ['error', { patterns: [THROUGH_LIBS] }],
    },
  },
  {
    // Issue 29: the dashboard's template editor completes what the parser accepts from the same lists: the
    // two pure data files of libs/edit-spec (no imports beyond each other), not the library (its index is the
    // server's parser). Only these two, only from this file.
    files: ['apps/dashboard/src/edit-json.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ regex: '^\\.\\./.*libs/(?!edit-spec/src/(keys|model)\\.js$)', message: 'The dashboard takes only libs/edit-spec keys.ts and model.ts (pure data).' }] }],
    },
  },
  {
    // Issue 31: the worker is adapters over the libraries' rules; the database, Redis and Lua stay behind their ports.
    files: ['apps/worker/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [THROUGH_LIBS, { regex: '^(@mikro-orm/|ioredis$|#libs/db$)', message: 'apps/worker reaches the database and Redis only through the libraries\' ports and adapters (libs/renders ports.ts).' }],
      }],
      'no-restricted-syntax': ['error', { selector: 'CallExpression[callee.property.name=/^(eval|evalsha|defineCommand)$/]', message: 'No Lua scripts in apps/worker: they are adapters of a library (libs/renders adapters/redis-video.ts).' }],
    },
  },
);
