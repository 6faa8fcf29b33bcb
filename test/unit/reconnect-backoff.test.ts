/**
 * ReconnectBackoff (src/store/resuming-watch.ts), the reconnect delays of EtcdStore's and
 * KubeStore's watches: without jitter the etcd sequence (100 ms doubling to 2 s), with equal jitter
 * the upstream one (ceiling 200 ms doubling to 5 s, delay in [ceiling/2, ceiling)), and reset.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ReconnectBackoff } from '../../src/store/resuming-watch.js';

test('without jitter: the ceiling, doubling from min to max; reset starts over', () => {
  const b = new ReconnectBackoff(100, 2000);
  const delays = Array.from({ length: 8 }, () => b.next());
  assert.deepEqual(delays, [100, 200, 400, 800, 1600, 2000, 2000, 2000]);
  b.reset();
  assert.equal(b.next(), 100);
  assert.equal(b.next(), 200);
});

test('equal jitter: half the ceiling fixed, half random', () => {
  const randoms = [0, 0.5, 0.999, 0, 0, 0, 0.25];
  const b = new ReconnectBackoff(200, 5000, () => randoms.shift()!);
  const delays = Array.from({ length: 7 }, () => b.next());
  // ceilings 200, 400, 800, 1600, 3200, 5000, 5000
  assert.deepEqual(delays, [100, 300, 800 / 2 + 0.999 * 400, 800, 1600, 2500, 2500 + 0.25 * 2500]);
});

test('a long outage stays at the maximum (no overflow to Infinity or NaN)', () => {
  const b = new ReconnectBackoff(100, 2000);
  for (let i = 0; i < 2000; i++) b.next();
  assert.equal(b.next(), 2000);
  const j = new ReconnectBackoff(200, 5000, () => 0.99);
  for (let i = 0; i < 2000; i++) j.next();
  assert.equal(j.next(), 2500 + 0.99 * 2500);
});
