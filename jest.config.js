/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // ts-jest transpiles each file on its own (tsconfig.jest.json: isolatedModules), without type-checking it: the
  // type check of src, test, bench and clients is `npm run typecheck`, in `npm run lint`, which CI runs before the
  // tests. Type-checking here cost every jest worker a TypeScript program of its own on a clean clone's cold cache:
  // test/unit/card.test.ts 20.3 s CPU against 8.4 s transpiled, sale-lifecycle 46.5 s against 17.5 s.
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.jest.json' }] },
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  // Every answer from tokengate is checked against openapi.json (issue 14): test/support/openapi-setup.ts.
  setupFilesAfterEnv: ['<rootDir>/test/support/openapi-setup.ts'],
  // A ceiling, not a bound (issue 41): a test waits for its events (no file or test may set a shorter one:
  // test/unit/test-ceilings.test.ts), and on a busy 2-core box (load averages of 20
  // to 30 measured beside five other runs) a test that takes 10 s alone can take several times that.
  testTimeout: 120000,
  maxWorkers: 2,
};
