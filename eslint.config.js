/**
 * ESLint (flat config): typescript-eslint's type-checked rules over every TypeScript file in the
 * project, plus the import-direction rule that keeps the engine independent of its users.
 *
 * The engine is everything under src/ except src/server, src/cli and src/sim (the consumers of the
 * engine), together with workers/. It never imports those consumers, the benchmarks (native-bench/)
 * or the tests (test/), and never the benchmark-only packages (tinybench, hdr-histogram-js).
 * The rule is `no-restricted-imports` with one regular expression per directory depth, so that
 * `../server/x.js` is refused from src/cache/ but `./server/x.js` would be refused from src/ itself.
 */
import eslint from '@eslint/js';
import tseslint from 'typescript-eslint';

/** Directories of src/ that use the engine; the engine never imports them. */
const CONSUMERS = ['server', 'cli', 'sim'];
/** Top-level directories beside src/ that the engine never imports. */
const OUTSIDE = ['native-bench', 'test'];
/** Packages only the benchmarks may use. */
const BENCH_PACKAGES = ['tinybench', 'hdr-histogram-js'];

const MESSAGE =
  'The engine (src/ except server, cli, sim; workers/) never imports the server, the CLI, the simulator, the benchmarks or the tests.';

/**
 * `no-restricted-imports` for an engine file: `toSrc` and `toRoot` are the regular expressions of
 * the relative path from the file's directory to src/ and to the project root.
 */
function engineImports(toSrc, toRoot) {
  return [
    'error',
    {
      paths: BENCH_PACKAGES.map((name) => ({
        name,
        message: `${name} is for the benchmarks (native-bench/); the engine does not depend on it.`,
      })),
      patterns: [
        { regex: `^${toSrc}(?:${CONSUMERS.join('|')})(?:/|$)`, message: MESSAGE },
        { regex: `^${toRoot}(?:${OUTSIDE.join('|')})(?:/|$)`, message: MESSAGE },
      ],
    },
  ];
}

/** `../` repeated n times (`./` for 0), as a regular expression. */
const up = (n) => (n === 0 ? '\\./' : `(?:\\.\\./){${n}}`);

/** One block per directory depth below src/ (src/*.ts, src/a/*.ts, ... down to five directories deep). */
const engineBlocks = [0, 1, 2, 3, 4, 5].map((depth) => ({
  name: `watchcache/engine-imports-depth-${depth}`,
  files: [`src/${'*/'.repeat(depth)}*.ts`],
  ignores: CONSUMERS.map((dir) => `src/${dir}/**`),
  rules: { 'no-restricted-imports': engineImports(up(depth), up(depth + 1)) },
}));

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.ci/tools/**', 'coverage/**', 'bench-results/**'] },
  eslint.configs.recommended,
  {
    // The examples are plain Node scripts, run as they are.
    files: ['examples/**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', setTimeout: 'readonly' } },
  },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // node:test's test()/describe() return promises the runner itself awaits; a subtest t.test() is not among them.
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [
            { from: 'package', package: 'node:test', name: ['test', 'describe', 'it', 'suite'] },
          ],
        },
      ],
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      // `_`-prefixed names are deliberately unused (a rest-sibling omission, a positional parameter).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      // An `async` method without `await` is how a Promise-returning interface method (Store) turns a
      // synchronous throw into a rejection; the rule would have us drop `async` and change that.
      '@typescript-eslint/require-await': 'off',
    },
  },
  ...engineBlocks,
  {
    name: 'watchcache/workers-imports',
    files: ['workers/*.ts'],
    rules: { 'no-restricted-imports': engineImports('\\.\\./src/', '\\.\\./') },
  },
  {
    name: 'watchcache/config-files',
    files: ['**/*.js', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
  },
);
