import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'clients/typescript/dist/**', 'node_modules/**', 'coverage/**', 'bench/results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'error',
    },
  },
  { files: ['src/cli/**', 'src/sandbox/main.ts', 'bench/**', 'scripts/**', 'test/support/**'], rules: { 'no-console': 'off' } },
  // Plain browser scripts served as they are (the Pay.js stand-in, the /demo page): no build step, no modules.
  { files: ['src/sandbox/payjs/*.js', 'src/http/demo/*.js', 'src/http/docs/*.js'], languageOptions: { sourceType: 'script', globals: { window: 'readonly', document: 'readonly', fetch: 'readonly', URL: 'readonly', Promise: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', crypto: 'readonly', sessionStorage: 'readonly', usaepay: 'readonly' } } },
  { files: ['**/*.js', '**/*.cjs'], ignores: ['src/sandbox/payjs/*.js', 'src/http/demo/*.js', 'src/http/docs/*.js'], languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly', module: 'writable', exports: 'writable', process: 'readonly', __dirname: 'readonly', __filename: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly', fetch: 'readonly', AbortController: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', setImmediate: 'readonly' } }, rules: { '@typescript-eslint/no-require-imports': 'off' } },
);
