// Jest: one run of three projects sharing two workers, so each fills the other's idle time.
// - e2e: TypeScript through @swc/jest; one local stack (DynamoDB Local, S3 emulator, HTTP gateway) per run, and
//   the run's one CDK synth (test/support/shapes.ts), both started by the global set-up.
// - integration: test/stack, public surfaces only, its own stack (jest.integration.config.js; alone it can
//   target a deployed stack).
// - moto: the IAM tier against moto_server (jest.moto.config.js).
const { transform, transformIgnorePatterns } = require('./test/support/jest-transform.js');
// maxWorkers, verbose and testTimeout are options of the whole run, not of a project.
const project = ({ maxWorkers, verbose, testTimeout, ...config }) => ({ ...config, rootDir: __dirname });

/** @type {import('jest').Config} */
module.exports = {
  maxWorkers: 2,
  // Longest files first, also on a fresh clone with no cached durations (test/support/sequencer.js).
  testSequencer: '<rootDir>/test/support/sequencer.js',
  // The longest a test of the three may take unless it says otherwise (the IAM tier's, jest.moto.config.js).
  testTimeout: 120000,
  projects: [
    {
      displayName: 'e2e',
      // Node, plus the stack's log lines of a failing test (a passing one prints nothing).
      testEnvironment: '<rootDir>/test/support/stack-log-environment.ts',
      roots: ['<rootDir>/test'],
      testMatch: ['**/*.test.ts'],
      testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/stack/', '<rootDir>/test/moto/'],
      transform,
      transformIgnorePatterns,
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
      rootDir: __dirname,
    },
    { displayName: 'integration', ...project(require('./jest.integration.config.js')) },
    { displayName: 'moto', ...project(require('./jest.moto.config.js')) },
  ],
};
