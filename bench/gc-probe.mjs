// Preloaded into a benchmark's server process (NODE_OPTIONS=--import): a full
// garbage collection on SIGUSR2, so the bench can read the heap that is
// really kept (from /metrics) rather than whatever garbage the young
// generation holds at that moment. Benchmarks only; the server never loads it.
import v8 from 'node:v8';
import vm from 'node:vm';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc');
process.on('SIGUSR2', () => gc());
