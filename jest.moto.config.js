// Jest for the IAM tier (test/moto): the functions' handlers in-process against moto_server, each with only
// its own role's policy (docs/testing-aws.md, "IAM tier against moto"). No local stack: moto is started per file.
/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test/moto'],
  testMatch: ['**/*.test.ts'],
  ...require('./test/support/jest-transform.js'),
  testTimeout: 120000,
  maxWorkers: 2,
  verbose: true,
};
