// Jest: TypeScript through @swc/jest; one local stack (DynamoDB Local, S3 emulator, HTTP gateway) per run.
/** @type {import('jest').Config} */
module.exports = {
  // Node, plus the stack's log lines of a failing test (a passing one prints nothing).
  testEnvironment: '<rootDir>/test/support/stack-log-environment.ts',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // test/stack is the integration suite, with its own set-up: jest.integration.config.js; test/moto the IAM
  // tier against moto: jest.moto.config.js.
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/stack/', '<rootDir>/test/moto/'],
  transform: { '^.+\\.[tj]s$': ['@swc/jest', { jsc: { target: 'es2022' } }] },
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  testTimeout: 30000,
  maxWorkers: 2,
};
