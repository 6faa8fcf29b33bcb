/**
 * The selector catch-up bench (native-bench/catchup/selector-catchup.ts): a
 * small run per mode and selection has every watcher catch up to its last
 * selected event, with exactly the events its selection selects (beta's
 * sync worker decides them from the payload's selection section: labels and
 * the indexed node name), and finite figures.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Mode } from '../../src/index.js';
import { runSelectorCatchupOnce } from '../../native-bench/catchup/selector-catchup.js';

for (const selection of ['all', 'label', 'field'] as const)
  test(`selector catch-up (${selection}): every watcher gets exactly its selected events, alpha and beta alike`, async () => {
    for (const mode of ['alpha', 'beta'] as Mode[]) {
      // 300 pods on 100 nodes: tier=db is a third of them, node-3 three of them; each updated twice.
      const row = await runSelectorCatchupOnce({ mode, selection, watchers: 3, historyEvents: 600, pods: 300 });
      const want = selection === 'all' ? 600 : selection === 'label' ? 200 : 6;
      assert.equal(row.selectedPerWatcher, want, `${mode}: selected`);
      for (const w of [row.cold, row.warm]) {
        assert.equal(w.delivered, 3 * want, `${mode}: every selected event reached every watcher, once`);
        assert.ok(Number.isFinite(w.allCaughtUpMs) && w.allCaughtUpMs > 0, `${mode}: ${w.allCaughtUpMs}`);
        assert.ok(w.cpuMs >= 0);
      }
    }
  });
