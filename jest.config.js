/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // ts-jest type-checks every test file and what it imports (isolatedModules stays off on purpose).
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }] },
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  // Every answer from tokengate is checked against openapi.json (issue 14): test/support/openapi-setup.ts.
  setupFilesAfterEnv: ['<rootDir>/test/support/openapi-setup.ts'],
  testTimeout: 30000,
  maxWorkers: 2,
};
