// Free TCP ports for test stacks (the same helper the benchmark uses).
export { freePort } from '../../lib/local/ports';
