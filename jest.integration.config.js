// Jest for the integration suite (test/stack): only public surfaces (HTTP, the centrifuge client, the Bot API,
// webhooks), against a fresh local stack or, with CLIENT_API_URL, CLIENT_KEY and BOT_SECRET_KEY, a deployed one.
/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test/stack'],
  testMatch: ['**/*.test.ts'],
  ...require('./test/support/jest-transform.js'),
  globalSetup: '<rootDir>/test/stack/global-setup.ts',
  globalTeardown: '<rootDir>/test/stack/global-teardown.ts',
  testTimeout: 90000,
  maxWorkers: 2,
  // Every test's name, so a skipped group shows its reason.
  verbose: true,
};
