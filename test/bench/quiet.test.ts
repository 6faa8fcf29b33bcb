/**
 * untilQuiet (native-bench/lib/quiet.ts): a thread of this process that keeps
 * a core busy holds it back (it gives up at its cap, quiet false); once that
 * thread ends, it resolves quiet. Decided by the process's CPU share, not by
 * how long anything takes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { untilQuiet } from '../../native-bench/lib/quiet.js';

// Spins until its shared flag is set (no message needed to stop it: its event loop never runs).
const SPINNER = `
const { workerData } = require('node:worker_threads');
const stop = new Int32Array(workerData);
while (Atomics.load(stop, 0) === 0) {}
`;

test('untilQuiet: not quiet while another thread of the process spins; quiet once it stopped', async () => {
  const flag = new SharedArrayBuffer(4);
  const spinner = new Worker(SPINNER, { eval: true, workerData: flag });
  const exited = new Promise((resolve) => spinner.once('exit', resolve));
  await new Promise((resolve) => spinner.once('online', resolve));
  try {
    const busy = await untilQuiet({ capMs: 400 });
    assert.equal(busy.quiet, false, 'a spinning worker thread keeps the process busy');
  } finally {
    Atomics.store(new Int32Array(flag), 0, 1);
    await exited;
  }
  const idle = await untilQuiet();
  assert.equal(idle.quiet, true, 'nothing runs any more');
});
